#!/bin/sh
# The zone transfer tests against the fork built with ThreadSanitizer
# (make fork-tsan): the auth-zone I/O thread applying, swapping in and
# writing zones while both worker threads answer queries for them, take
# NOTIFYs and remote control commands, and end ZONEMD checks. Any
# ThreadSanitizer report fails.
usage="usage: test_zone_tsan.sh TSANBUILDDIR"

set -u
[ $# -eq 1 ] || { echo "$usage" >&2; exit 2; }
bld=$(cd "$1" && pwd) || exit 2
here=$(cd "$(dirname "$0")" && pwd)
PYTHON=${PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3)}
nm "$bld/unbound" 2>/dev/null | grep -q __tsan_init ||
	{ echo "test_zone_tsan: $bld/unbound is not built with -fsanitize=thread"; exit 1; }
logs=$(mktemp -d "${TMPDIR:-/tmp}/steady-tsan.XXXXXX") || exit 1
trap 'rm -rf "$logs"' EXIT INT TERM
# testcode/tsan-stock.supp: start-up races of Unbound 1.22.0 itself
TSAN_OPTIONS="log_path=$logs/tsan second_deadlock_stack=1 history_size=4 suppressions=$here/tsan-stock.supp"
export TSAN_OPTIONS
rc=0
"$PYTHON" "$here/test_zone_transfer.py" "$bld" --records 20000 --bumps 3 || rc=1
# the probe limit is for stalls; the sanitizer makes everything slower
"$PYTHON" "$here/test_zone_stall.py" "$bld" --names 20000 --updates 2 \
	--rate 300 --limit 1.0 || rc=1
# ZONEMD: a worker ends the check after the DS lookup while the I/O
# thread applies an IXFR of the zone
"$PYTHON" "$here/test_zone_zonemd.py" "$bld" --names 20000 || rc=1
reports=$(ls "$logs" | wc -l)
if [ "$reports" -ne 0 ]; then
	echo "ThreadSanitizer reports:"
	cat "$logs"/* | head -n 200
	rc=1
fi
echo "zone tests under ThreadSanitizer: $reports report file(s)"
exit $rc
