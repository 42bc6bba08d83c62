#!/bin/sh
# Test-only build: a source tree (the fork's work tree, its committed
# state, or the stock base) with the upstream fix of the wildcard-CNAME hash
# bug reverted, to prove the regression test fails on that bug and to
# benchmark the bug. Never installed or shipped.
usage="usage: build-hashbug.sh SRCDIR BUILDDIR"

set -eu
[ $# -eq 2 ] || { echo "$usage" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$1" && pwd)
bld=$2
tree=$bld.src
if [ -d "$src/.git" ]; then
	head=$(git -C "$src" rev-parse HEAD)
else
	head="$src (not a git tree)"
fi
if [ "$(cat "$tree/.head" 2>/dev/null)" != "$head" ]; then
	rm -rf "$tree"
	mkdir -p "$tree"
	# -m: the files get the time of this extraction, not the commit's
	# (git archive's), which may be older than the objects of the
	# tree before (a series rewritten with its dates kept), so that
	# make compiles them again
	if [ -d "$src/.git" ]; then
		git -C "$src" archive HEAD | tar -x -m -C "$tree"
	else
		(cd "$src" && tar -cf - .) | tar -x -m -f - -C "$tree"
	fi
	patch -s -d "$tree" -p1 < "$here/../testcode/patches/revert-az-change-dnames-hash-fix.patch"
	echo "$head" > "$tree/.head"
fi
# LTO, the Python module and a static library only slow this build down;
# they are not what is tested (the daemon and unbound-control are).
CONFIGURE_FLAGS="--disable-flto --without-pythonmodule --without-pyunbound --disable-static" \
	"$here/build.sh" "$tree" "$bld"
