#!/bin/sh
# Build testcode/unit_hash.c (cmocka) against a built Unbound (its
# libunbound.a, config.h and source tree) and run it: the cache hash
# functions lookup3 and xxh3 (case, seeds, distribution over slabs and
# bins, once-per-process selection). Tests of xxh3 are skipped, and said
# so, when the build has no xxHash. Ends with "unit hash: N passed, M failed".
usage="usage: test_hash.sh BUILDDIR"

set -u
[ $# -eq 1 ] || { echo "$usage" >&2; exit 2; }
bld=$(cd "$1" && pwd) || exit 2
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "test_hash: error: $*" >&2; echo "unit hash: 0 passed, 1 failed"; exit 1; }

[ -f "$bld/Makefile" ] && [ -f "$bld/config.h" ] || die "$bld is not a configured build directory"
[ -f "$bld/.libs/libunbound.a" ] || die "$bld/.libs/libunbound.a is missing: build it first (make)"
src=$(sed -n 's/^srcdir=[[:space:]]*//p' "$bld/Makefile")
[ -f "$src/util/storage/cachehash.h" ] ||
	die "$src has no util/storage/cachehash.h: not a tree with the cache-hash patch"
libs=$(sed -n 's/^LIBS=//p' "$bld/Makefile")
ssllib=$(sed -n 's/^SSLLIB=//p' "$bld/Makefile")
ldflags=$(sed -n 's/^LDFLAGS=//p' "$bld/Makefile")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_hash.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
# shellcheck disable=SC2086 # word splitting of the Makefile's flags
${CC:-cc} -O2 -g -Wall -I"$bld" -I"$src" -o "$tmp/unit_hash" "$here/unit_hash.c" \
	$ldflags "$bld/.libs/libunbound.a" $libs $ssllib -lcmocka -lm -pthread ||
	die "could not build unit_hash.c against $bld"

grep -q '^#define HAVE_XXHASH 1' "$bld/config.h" ||
	echo "note: $bld is built without xxHash, the xxh3 tests are skipped"
start=$(date +%s)
"$tmp/unit_hash" > "$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
secs=$(( $(date +%s) - start ))
passed=$(grep -c '^\[       OK \]' "$tmp/out")
# cmocka lists a skipped test twice: when it runs and in the summary
skipped=$(grep '^\[  SKIPPED \] test_' "$tmp/out" | sort -u | wc -l)
failed=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s).*/\1/p' "$tmp/out")
failed=${failed:-0}
[ "$rc" -eq 0 ] || [ "$failed" -gt 0 ] || failed=1
note=""
[ "$skipped" -eq 0 ] || note=" ($skipped skipped: no xxh3 in this build)"
echo "unit hash: $passed passed, $failed failed$note, ${secs}s"
[ "$rc" -eq 0 ]
