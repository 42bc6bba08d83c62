#!/bin/sh
# The dependency steps start no service: no new listening socket (ss
# -ltnup) appears while scripts/install-deps.sh installs the build and then
# the test dependencies. The proof runs the same check around a step that
# does start a daemon with its packaged defaults, and must see it.
usage="usage: test_deps_listen.sh [--proof]
  Needs root on a machine where the packages are missing to install
  anything; where they are all present the steps do nothing and the test
  checks only that. --proof: the step is a packaged program (python3's
  http.server) listening on loopback, which the check must report."

set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
proof=0
case ${1:-} in
--proof) proof=1 ;;
"") ;;
*) echo "$usage" >&2; exit 2 ;;
esac
PYTHON=${PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/steady-depslisten.XXXXXX")
daemon=""
trap '[ -z "$daemon" ] || kill "$daemon" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM

"$PYTHON" "$here/listeners.py" snapshot "$tmp/before" || { echo "test_deps_listen: ss failed"; exit 1; }
if [ $proof = 1 ]; then
	# A free loopback port, then a daemon on it, as a postinst would start one.
	port=$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	cd /
	"$PYTHON" -m http.server --bind 127.0.0.1 "$port" > /dev/null 2>&1 &
	daemon=$!
	cd - >/dev/null
	echo "  proof: a daemon (pid $daemon) listening on 127.0.0.1:$port"
else
	for group in build test; do
		"$top/scripts/install-deps.sh" $group > "$tmp/deps-$group.log" 2>&1 ||
			{ cat "$tmp/deps-$group.log"; echo "test_deps_listen: install-deps.sh $group failed"; exit 1; }
		sed 's/^/  /' "$tmp/deps-$group.log"
	done
	[ ! -s "$tmp/deps-build.log" ] || [ ! -s "$tmp/deps-test.log" ] ||
		echo "  (packages were installed)"
fi
# Services started by a postinst come up within a moment.
sleep 3
"$PYTHON" "$here/listeners.py" snapshot "$tmp/after"
"$PYTHON" "$here/listeners.py" new "$tmp/before" "$tmp/after"
rc=$?
if [ $proof = 1 ]; then
	[ $rc = 1 ] && { echo "test_deps_listen: ok (the check reports the daemon's socket)"; exit 0; }
	echo "test_deps_listen: FAIL: the check did not report the daemon on 127.0.0.1:$port"; exit 1
fi
[ $rc = 0 ] && { echo "test_deps_listen: ok (no new listening socket from the dependency steps)"; exit 0; }
echo "test_deps_listen: FAIL: the dependency steps left a listening service"; exit 1
