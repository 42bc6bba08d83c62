#!/bin/sh
# Every upstream tdir test listed in testcode/upstream-tdir-base-failures
# still fails on stock (the base without the fork's patches), at the step
# the list names. make check-series does not run the listed tests; this
# fails when a base fixes one, so that the list is emptied then.
usage="usage: test_tdir_base_failures.sh STOCKBUILDDIR
  STOCKBUILDDIR is build/stock (make stock)."

set -u
[ $# -eq 1 ] || { echo "$usage" >&2; exit 2; }
bld=$(cd "$1" && pwd) || exit 2
here=$(cd "$(dirname "$0")" && pwd)
list=$here/upstream-tdir-base-failures
fails=0 n=0
tab=$(printf '\t')
while IFS="$tab" read -r name step; do
	case $name in ''|'#'*) continue ;; esac
	n=$((n + 1))
	if "$here/upstream-tdir.sh" "$bld" "$name.tdir" > "$bld/base-failure-$name.log" 2>&1; then
		echo "  FAIL: $name passes on stock now: remove it from $list"
		fails=$((fails + 1))
		continue
	fi
	# the last step the test started before it failed
	last=$(sed -n 's/^STEP \[ \(.*\) \]$/\1/p' "$bld/testdata/result.$name" | tail -n 1)
	if [ "$last" = "$step" ]; then
		echo "  ok: $name fails on stock at step '$step'"
	else
		echo "  FAIL: $name fails on stock at step '$last', the list says '$step'"
		fails=$((fails + 1))
	fi
done < "$list"
[ $fails -eq 0 ] && { echo "test_tdir_base_failures: ok ($n listed)"; exit 0; }
echo "test_tdir_base_failures: $fails check(s) failed"; exit 1
