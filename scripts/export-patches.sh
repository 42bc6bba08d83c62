#!/bin/sh
# Write the commits base..HEAD of the work tree SRCDIR to PATCHDIR as
# git format-patch files plus a series file; --check only compares.
usage="usage: export-patches.sh [--check] SRCDIR PATCHDIR"

set -eu
check=0
[ "${1:-}" = --check ] && { check=1; shift; }
[ $# -eq 2 ] || { echo "$usage" >&2; exit 2; }
src=$1 pdir=$2
die() { echo "export-patches: error: $*" >&2; exit 1; }
git -C "$src" rev-parse -q --verify base >/dev/null || die "$src has no tag 'base' (run make src)"
[ -z "$(git -C "$src" status --porcelain --untracked-files=no)" ] ||
	[ $check = 1 ] || die "$src has uncommitted edits; commit them first"

out=$(mktemp -d "${TMPDIR:-/tmp}/export-patches.XXXXXX")
trap 'rm -rf "$out"' EXIT INT TERM
# Zero commit ids, no numbering and no signature keep the files stable
# when the tree is rebuilt from them (make src && make export-patches).
git -C "$src" format-patch -q --zero-commit --no-signature -N \
	--no-renames -o "$out" base..HEAD
(cd "$out" && ls *.patch 2>/dev/null || true) > "$out/series"

if [ $check = 1 ]; then
	for f in "$out"/series "$out"/*.patch; do
		[ -f "$f" ] || continue
		cmp -s "$f" "$pdir/$(basename "$f")" || exit 1
	done
	[ "$(ls "$pdir" | grep -c '\.patch$')" = "$(grep -c . "$out/series")" ] || exit 1
	exit 0
fi
mkdir -p "$pdir"
rm -f "$pdir"/*.patch
cp "$out"/*.patch "$pdir"/ 2>/dev/null || true
cp "$out/series" "$pdir/series"
echo "export-patches: $(grep -c . "$pdir/series") patch(es) written to $pdir"
