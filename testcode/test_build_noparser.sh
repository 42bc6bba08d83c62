#!/bin/sh
# Without flex or bison, scripts/build.sh stops at once with an error that
# names the missing tool, before configure runs, instead of compiling the
# tarball's old config parser that does not know the fork's options.
usage="usage: test_build_noparser.sh SRCDIR
  SRCDIR is the patched tree (build/src), read only."

set -u
[ $# -eq 1 ] || { echo "$usage" >&2; exit 2; }
src=$(cd "$1" && pwd) || exit 2
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/steady-noparser.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0
for tool in FLEX BISON; do
	out=$(env "$tool=steady-no-such-$tool" "$top/scripts/build.sh" "$src" "$tmp/$tool" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && echo "$out" | grep -q "steady-no-such-$tool is not installed" &&
		[ ! -f "$tmp/$tool/config.log" ]; then
		echo "  ok: without $tool: exit $rc, '$out'"
	else
		echo "  FAIL: without $tool: exit $rc, configure ran: $([ -f "$tmp/$tool/config.log" ] && echo yes || echo no), output: $(echo "$out" | tail -n 3)"
		fails=$((fails + 1))
	fi
done
[ $fails -eq 0 ] && echo "build-noparser: OK" || echo "build-noparser: FAIL"
[ $fails -eq 0 ]
