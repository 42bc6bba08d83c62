#!/bin/sh
# The patch series round-trips: a work tree built from patches/ exports
# back to exactly the same files (what make src && make export-patches do).
usage="usage: test_roundtrip.sh BASEDIR PATCHDIR"

set -u
[ $# -eq 2 ] || { echo "$usage" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/steady-roundtrip.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
"$top/scripts/make-src.sh" "$1" "$2" "$tmp/src" || { echo "make-src failed"; exit 1; }
n=$(git -C "$tmp/src" rev-list --count base..HEAD)
if "$top/scripts/export-patches.sh" --check "$tmp/src" "$2"; then
	echo "test_roundtrip: ok ($n patches)"
else
	"$top/scripts/export-patches.sh" "$tmp/src" "$tmp/out" >/dev/null
	diff -ru "$2" "$tmp/out" | head -n 40
	echo "test_roundtrip: export differs from $2"
	exit 1
fi
