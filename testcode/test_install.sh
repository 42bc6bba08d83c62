#!/bin/sh
# make install into a DESTDIR puts every program, libunbound and the man
# pages where a stock Unbound install has them, under the configured prefix,
# writes example.conf only where there is no configuration, and the drop-in
# of make install-systemd makes Debian's unbound.service start the fork.
usage="usage: test_install.sh BUILDDIR [PREFIX]"

set -u
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
bld=$(cd "$1" && pwd) || exit 2
top=$(cd "$(dirname "$0")/.." && pwd)
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
# Upstream's install writes doc/example.conf as the config file when there
# is none, and leaves an existing one alone (README, "make install next to
# Debian's unbound").
cmp -s "$dest/etc/unbound/unbound.conf" "$bld/doc/example.conf" &&
	echo "  ok: /etc/unbound/unbound.conf written from example.conf where there was none" || {
	echo "  FAIL: /etc/unbound/unbound.conf is not example.conf after an install without one"
	fails=$((fails + 1)); }
kept=$(mktemp -d "${TMPDIR:-/tmp}/steady-install-kept.XXXXXX")
trap 'rm -rf "$dest" "$kept"' EXIT INT TERM
mkdir -p "$kept/etc/unbound"
echo "# the operator's configuration" > "$kept/etc/unbound/unbound.conf"
make -C "$bld" install DESTDIR="$kept" > "$kept/log" 2>&1 || {
	tail -n 20 "$kept/log"; echo "make install over a configuration failed"; exit 1; }
[ "$(cat "$kept/etc/unbound/unbound.conf")" = "# the operator's configuration" ] &&
	echo "  ok: an existing /etc/unbound/unbound.conf is kept" || {
	echo "  FAIL: make install changed an existing /etc/unbound/unbound.conf"; fails=$((fails + 1)); }
# The drop-in of make install-systemd, with Debian's unit of the base: the
# one command systemd starts is the installed fork, with the unit's own
# arguments, and the unit still verifies. Type=notify needs libsystemd.
unit=$top/build/base/debian/unbound.service
if [ ! -f "$unit" ]; then
	echo "  FAIL: no $unit (make base)"; fails=$((fails + 1))
elif ! command -v systemd-analyze >/dev/null; then
	echo "  FAIL: no systemd-analyze"; fails=$((fails + 1))
else
	mkdir -p "$kept/units/unbound.service.d"
	cp "$unit" "$kept/units/"
	"$top/scripts/systemd-dropin.sh" "$prefix" > "$kept/dropin.conf"
	debian_start=$(sed -n 's/^ExecStart=\(.\)/\1/p' "$unit")
	ours=$(sed -n 's/^ExecStart=\(.\)/\1/p' "$kept/dropin.conf")
	[ "${ours#"$prefix/sbin/unbound "}" = "${debian_start#/usr/sbin/unbound }" ] &&
		[ "$ours" != "$debian_start" ] && echo "  ok: drop-in: $ours (Debian's: $debian_start)" || {
		echo "  FAIL: drop-in ExecStart '$ours' is not Debian's '$debian_start' with $prefix/sbin/unbound"
		fails=$((fails + 1)); }
	# the installed copy of the binary, which systemd-analyze checks
	sed "s#^ExecStart=$prefix/#ExecStart=$kept$prefix/#" "$kept/dropin.conf" \
		> "$kept/units/unbound.service.d/unbound-steady.conf"
	(cd "$kept/units" && SYSTEMD_LOG_LEVEL=debug SYSTEMD_UNIT_PATH="$kept/units:" \
		systemd-analyze verify --man=no "$kept/units/unbound.service") > "$kept/verify" 2>&1
	rc=$?
	cmds=$(sed -n '/-> ExecStart:$/,/-> Exec[A-Z][a-z]*[A-Z][a-z]*:$\|-> ExecReload:$/p' "$kept/verify" |
		sed -n 's/^[[:space:]]*Command Line: //p')
	want="$kept$prefix/sbin/unbound -d -p \"\\\$DAEMON_OPTS\""
	if [ $rc -eq 0 ] && [ "$cmds" = "$want" ]; then
		echo "  ok: Debian's unit with the drop-in starts only $prefix/sbin/unbound"
	else
		echo "  FAIL: systemd-analyze verify exit $rc, ExecStart commands: $cmds"
		grep '^[^[:space:]]*unbound.service' "$kept/verify" | tail -n 5; fails=$((fails + 1))
	fi
	readelf -d "$kept$prefix/sbin/unbound" | grep -q 'NEEDED.*libsystemd' &&
		echo "  ok: unbound links libsystemd (the unit's Type=notify)" || {
		echo "  FAIL: unbound has no libsystemd, the unit's Type=notify would time out"
		fails=$((fails + 1)); }
fi
[ $fails -eq 0 ] && { echo "test_install: ok"; exit 0; }
echo "test_install: $fails check(s) failed"; exit 1
