#!/bin/sh
# Print the names of the patches in PATCHDIR/series, in order, one per
# line: the one reader of the series for every script and test. Comments
# (#...) and blank lines are skipped; quilt's "-pN" options are used by
# neither series, so a line with more than one field is refused rather
# than ignored, as is a listed patch that is missing.
usage="usage: series.sh PATCHDIR"

set -eu
[ $# -eq 1 ] || { echo "$usage" >&2; exit 2; }
pdir=$1
die() { echo "series: error: $*" >&2; exit 1; }
[ -f "$pdir/series" ] || die "no series file in $pdir"
names=$(sed -e 's/#.*//' "$pdir/series" | awk '
	NF > 1 { print "series: error: line \047" $0 "\047: options are not supported" > "/dev/stderr"; bad = 1; exit }
	NF == 1 { print $1 }
	END { exit bad }') || exit 1
for p in $names; do
	[ -f "$pdir/$p" ] || die "patch $p is listed in $pdir/series but missing"
done
[ -z "$names" ] || printf '%s\n' $names
