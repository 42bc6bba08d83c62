#!/bin/sh
# Test-only build: the fork's committed work tree with the upstream fix of
# the wildcard-CNAME hash bug reverted, to prove the regression test fails
# on that bug. Never installed or shipped.
usage="usage: build-hashbug.sh SRCDIR BUILDDIR"

set -eu
[ $# -eq 2 ] || { echo "$usage" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$1" && pwd)
bld=$2
tree=$bld.src
head=$(git -C "$src" rev-parse HEAD)
if [ "$(cat "$tree/.head" 2>/dev/null)" != "$head" ]; then
	rm -rf "$tree"
	mkdir -p "$tree"
	git -C "$src" archive HEAD | tar -x -C "$tree"
	patch -s -d "$tree" -p1 < "$here/../testcode/patches/revert-az-change-dnames-hash-fix.patch"
	echo "$head" > "$tree/.head"
fi
# LTO only slows this build down; it is not what is tested.
CONFIGURE_FLAGS="--disable-flto" "$here/build.sh" "$tree" "$bld"
