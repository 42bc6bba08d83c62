#!/bin/sh
# make install into a DESTDIR puts every program, libunbound and the man
# pages where a stock Unbound install has them, under the configured prefix.
usage="usage: test_install.sh BUILDDIR [PREFIX]"

set -u
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
bld=$(cd "$1" && pwd) || exit 2
prefix=${2:-$(sed -n "s/^prefix=[[:space:]]*//p" "$bld/Makefile")}
dest=$(mktemp -d "${TMPDIR:-/tmp}/steady-install.XXXXXX")
trap 'rm -rf "$dest"' EXIT INT TERM
make -C "$bld" install DESTDIR="$dest" > "$dest.log" 2>&1 || {
	tail -n 20 "$dest.log"; rm -f "$dest.log"; echo "make install failed"; exit 1; }
rm -f "$dest.log"
fails=0
for f in sbin/unbound sbin/unbound-control sbin/unbound-control-setup \
	sbin/unbound-checkconf sbin/unbound-anchor sbin/unbound-host \
	include/unbound.h share/man/man8/unbound.8 share/man/man5/unbound.conf.5 \
	share/man/man8/unbound-control.8 share/man/man8/unbound-checkconf.8 \
	share/man/man8/unbound-anchor.8 share/man/man1/unbound-host.1 \
	share/man/man3/libunbound.3; do
	if [ -e "$dest$prefix/$f" ]; then echo "  ok: $prefix/$f"
	else echo "  FAIL: missing $prefix/$f"; fails=$((fails + 1)); fi
done
if ls "$dest$prefix"/lib/libunbound.so.8* >/dev/null 2>&1; then echo "  ok: libunbound.so.8"
else echo "  FAIL: missing $prefix/lib/libunbound.so.8"; fails=$((fails + 1)); fi
# The installed daemon is the fork and reads Debian's config path.
"$dest$prefix/sbin/unbound" -V | grep -q "Unbound Steady" || {
	echo "  FAIL: installed unbound -V does not name the fork"; fails=$((fails + 1)); }
"$dest$prefix/sbin/unbound" -h | grep -q "/etc/unbound/unbound.conf" || {
	echo "  FAIL: default config is not /etc/unbound/unbound.conf"; fails=$((fails + 1)); }
[ $fails -eq 0 ] && { echo "test_install: ok"; exit 0; }
echo "test_install: $fails check(s) failed"; exit 1
