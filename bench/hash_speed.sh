#!/bin/sh
# Build bench/hash_speed.c against a built Unbound with xxHash (its
# libunbound.a, config.h and source tree) and run it: ns per cache hash,
# lookup3 against XXH3, for names of 8 to 255 bytes. Prints Markdown.
# Benchmarks share the machine: run it as
#   flock build/.bench.lock bench/hash_speed.sh BUILDDIR
usage="usage: hash_speed.sh BUILDDIR"

set -eu
[ $# -eq 1 ] || { echo "$usage" >&2; exit 2; }
bld=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "hash_speed: error: $*" >&2; exit 1; }
[ -f "$bld/.libs/libunbound.a" ] || die "$bld/.libs/libunbound.a is missing: build it first"
grep -q '^#define HAVE_XXHASH 1' "$bld/config.h" || die "$bld is built without xxHash (--with-xxhash)"
src=$(sed -n 's/^srcdir=[[:space:]]*//p' "$bld/Makefile")
libs=$(sed -n 's/^LIBS=//p' "$bld/Makefile")
ssllib=$(sed -n 's/^SSLLIB=//p' "$bld/Makefile")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hash_speed.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
# the same optimisation as the build (-O2), no LTO
# shellcheck disable=SC2086
${CC:-cc} -O2 -I"$bld" -I"$src" -o "$tmp/hash_speed" "$here/hash_speed.c" \
	"$bld/.libs/libunbound.a" $libs $ssllib -pthread
echo "Command: \`flock build/.bench.lock bench/hash_speed.sh $1\`  "
echo "Date: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
echo
"$tmp/hash_speed"
