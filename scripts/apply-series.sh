#!/bin/sh
# Apply every patch listed in PATCHDIR/series to TREE with patch -p1, in
# order. A patch that is missing or does not apply is named, with the files
# it failed on, and nothing after it is applied.
usage="usage: apply-series.sh TREE PATCHDIR"

set -eu
[ $# -eq 2 ] || { echo "$usage" >&2; exit 2; }
tree=$1 pdir=$2
die() { echo "apply-series: error: $*" >&2; exit 1; }
names=$("$(dirname "$0")/series.sh" "$pdir") || exit 1
for p in $names; do
	if ! out=$(patch -d "$tree" -p1 -N -f --no-backup-if-mismatch \
		--reject-file=- -i "$(cd "$pdir" && pwd)/$p" 2>&1); then
		echo "$out" | grep -v '^patching file' >&2
		# name the files whose hunks failed, not every file touched
		files=$(echo "$out" | awk '
			/^patching file / { f = substr($0, 15) }
			/FAILED|[Cc]an.t find file|No file to patch|Reversed/ {
				if (f != "" && !seen[f]++) printf "%s ", f }')
		die "patch $p does not apply${files:+ (failed in: ${files% })}"
	fi
done
