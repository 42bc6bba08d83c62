#!/bin/sh
# The allocation-failure check (issue 66): test_zone_alloc_sweep.py over
# the zone update paths (an IXFR appended to the journal, an AXFR applied
# as its difference, an update applied to a copy, an RPZ's IXFR and its
# AXFR applied as the difference) and
# test_parse_oom.py over a query's. make test runs a sample of each
# (about two minutes), make soak every allocation (--all; the copy's
# 7,800 are sampled 400).
usage="usage: alloc_sweeps.sh BUILDDIR [--all]
  BUILDDIR: a build with AddressSanitizer (make fork-asan)"

set -u
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
bld=$1
all=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
PYTHON=${PYTHON:-/usr/bin/python3}
sweep="$here/test_zone_alloc_sweep.py"
rc=0

# each line: the options of one sweep, the sample of make test, the
# sample of make soak (all: every allocation)
while read -r opts sample full; do
	[ -n "$opts" ] || continue
	n=$sample
	[ "$all" = "--all" ] && n=$full
	if [ "$n" = all ]; then k="--all"; else k="--sample $n"; fi
	# shellcheck disable=SC2086
	echo "== test_zone_alloc_sweep.py $(echo "$opts" | tr , ' ') $k"
	# shellcheck disable=SC2086
	"$PYTHON" "$sweep" "$bld" $(echo "$opts" | tr , ' ') $k || rc=1
done <<EOF
--names,2000,--vary,2 all all
--names,2000,--vary,2,--primary,nsd 15 all
--names,2000,--vary,2,--journal,no 8 all
--names,2000,--vary,600 10 400
--names,2000,--vary,2,--rpz 10 all
--names,2000,--vary,2,--rpz,--primary,nsd 10 all
EOF
echo "== test_parse_oom.py --all"
"$PYTHON" "$here/test_parse_oom.py" "$bld" --all || rc=1
exit $rc
