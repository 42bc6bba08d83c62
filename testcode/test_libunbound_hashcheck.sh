#!/bin/sh
# libunbound's message and rrset caches check inserted hash values as the
# daemon's do (testcode/libunbound/hashcheck.c, built against BUILDDIR's
# libunbound and internal headers).
usage="usage: test_libunbound_hashcheck.sh BUILDDIR"

set -eu
[ $# -eq 1 ] || { echo "$usage" >&2; exit 2; }
bld=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(sed -n 's/^srcdir=[[:space:]]*//p' "$bld/Makefile")
case $srcdir in /*) ;; *) srcdir=$bld/$srcdir ;; esac
make -C "$bld" -s libunbound.la >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -g -O1 -I"$bld" -I"$srcdir" -o "$out/hashcheck" "$here/libunbound/hashcheck.c" \
	-L"$bld/.libs" -lunbound -Wl,-rpath,"$bld/.libs"
"$out/hashcheck"
