#!/bin/sh
# Install the fork's Debian packages on this machine with apt, run
# /usr/sbin/unbound with Debian's default /etc/unbound/unbound.conf plus a
# conf.d snippet (loopback, demo zone), query it, check unbound -V, then
# purge the packages and check that they are gone. Needs root.
# With --upgrade, the upgrade path an operator takes: Debian's own unbound
# of this machine's release (apt) first, configured (the snippet, and an
# edit of /etc/unbound/unbound.conf) and run; then the fork's packages
# over it, which must keep the edited conffile, run with the same
# configuration and report every statistic Debian's did; then back to
# Debian's packages, which must run again with the edit kept.
usage="usage: test_deb.sh DEBDIR [--upgrade]
  DEBDIR holds the .debs of make deb (build/deb). Refuses to run when an
  unbound package or /etc/unbound is already on the machine; a libunbound8
  that is installed is saved first (from apt's cache or with dpkg-repack)
  and put back at the end. Nothing leaves loopback. This machine has no
  service manager: policy-rc.d keeps the packages from starting the
  service, and the test starts /usr/sbin/unbound as the unit does."

set -u
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "$usage" >&2; exit 2; }
[ $# -eq 1 ] || [ "$2" = --upgrade ] || { echo "$usage" >&2; exit 2; }
upgrade=0
[ $# -eq 1 ] || upgrade=1
debdir=$(cd "$1" && pwd) || exit 2
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$top/scripts/pin.sh"
pin_load "$top/base.pin" || exit 2
fail() { echo "test_deb: FAIL: $*"; exit 1; }
refuse() { echo "test_deb: refusing to run: $*"; exit 1; }
[ "$(id -u)" = 0 ] || refuse "needs root (it installs and purges packages)"
export DEBIAN_FRONTEND=noninteractive
arch=$(dpkg --print-architecture)
ver=$(cat "$debdir/VERSION" 2>/dev/null) || fail "no $debdir/VERSION (run make deb)"
level=$(cat "$debdir/PATCHLEVEL" 2>/dev/null) || fail "no $debdir/PATCHLEVEL (run make deb)"
# Installed: the daemon, its libunbound and unbound-anchor (used by
# Debian's unbound-helper when the service starts).
pkgs="unbound libunbound8 unbound-anchor"
debs=""
for p in $pkgs; do
	f=$debdir/${p}_${ver}_$arch.deb
	[ -f "$f" ] || fail "missing $f (run make deb)"
	debs="$debs $f"
done

# xxHash, whose XXH3 unbound and libunbound8 compile in from its header:
# a versioned build-dependency, the source and version each was built
# with (Built-Using, so that a security fix of xxHash rebuilds them), and
# its licence in their copyright files.
[ -f "$debdir/control" ] || fail "no $debdir/control (run make deb)"
grep -q '^Build-Depends:.*libxxhash-dev (>= 0\.8\.0)' "$debdir/control" ||
	fail "debian/control does not build-depend on libxxhash-dev (>= 0.8.0)"
for p in unbound libunbound8; do
	f=$debdir/${p}_${ver}_$arch.deb
	bu=$(dpkg-deb -f "$f" Built-Using)
	case $bu in
	"xxhash (= "*")") ;;
	*) fail "$p: Built-Using is '$bu', want 'xxhash (= VERSION)'" ;;
	esac
	dpkg-deb --fsys-tarfile "$f" | tar -xO "./usr/share/doc/$p/copyright" |
		grep -q '^License: BSD-2-clause-xxHash$' ||
		fail "$p: its copyright file has no licence of xxHash"
done
echo "  ok: xxHash: libxxhash-dev (>= 0.8.0), Built-Using: $bu, its licence in the copyright files"

# Built with the release's Python: configure's include path of the
# Python module is Debian's (a python3 earlier on the builder's PATH,
# pyenv's say, has headers and a libpython of its own).
[ -f "$debdir/build.log" ] || fail "no $debdir/build.log (run make deb)"
pyinc=$(sed -n 's/^checking for Python include path\.\.\. //p' "$debdir/build.log" | sort -u)
[ -n "$pyinc" ] || fail "the build log has no Python include path (configure's output changed?)"
for i in $pyinc; do
	case $i in
	-I/usr/include/python3*) ;;
	*) fail "the Python module was compiled with $i, not the release's Python (make-deb.sh: the build's PATH)" ;;
	esac
done
echo "  ok: built with the release's Python ($(echo $pyinc))"

# status PKG: dpkg's status word (installed, config-files, ...) or nothing.
status() { dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null; }

# A machine that runs Unbound from a package, or keeps its configuration,
# is not ours to change: refuse rather than replace or purge it.
for p in unbound unbound-anchor unbound-host python3-unbound libunbound-dev; do
	s=$(status "$p")
	case $s in ""|not-installed) ;;
	*) refuse "package $p is on this machine ($s, version $(dpkg-query -W -f='${Version}' "$p")).
  This test installs and then purges unbound; remove $p first (apt-get purge $p) or run it elsewhere." ;;
	esac
done
[ ! -e /etc/unbound ] || refuse "/etc/unbound exists; purging the test package would remove configuration that is not its own"
[ ! -e /usr/sbin/unbound ] || refuse "/usr/sbin/unbound exists but no package owns it"
# Debian's unbound.conf.d names /var/lib/unbound/root.key, which the
# service's helper copies from dns-root-data before the daemon starts.
[ -r /usr/share/dns/root.key ] || refuse "/usr/share/dns/root.key is missing (apt-get install dns-root-data)"
# Whether the service may start is asked to policy-rc.d; one that is
# already there must deny it (exit 101), or the package would start it.
made_policy=0
if [ -e /usr/sbin/policy-rc.d ]; then
	/usr/sbin/policy-rc.d unbound start >/dev/null 2>&1
	[ $? -eq 101 ] || refuse "the existing /usr/sbin/policy-rc.d lets the package start unbound"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/steady-deb.XXXXXX")
chmod 755 "$tmp"	# the daemon drops to user unbound and reads the zone
had_user=0
getent passwd unbound >/dev/null && had_user=1
had_group=0
getent group unbound >/dev/null && had_group=1
snippet=/etc/unbound/unbound.conf.d/zz-steady-test.conf
pid="" deps=""
# libunbound8 is a dependency of other packages (libgnutls-dane0), so an
# installed one is put back afterwards instead of purged.
oldlib=$(status libunbound8)
if [ "$oldlib" = installed ]; then
	oldver=$(dpkg-query -W -f='${Version}' libunbound8:"$arch")
	saved=/var/cache/apt/archives/libunbound8_$(echo "$oldver" | sed 's/:/%3a/')_$arch.deb
	if [ -f "$saved" ]; then
		cp "$saved" "$tmp/"
	elif command -v dpkg-repack >/dev/null; then
		(cd "$tmp" && timeout 120 dpkg-repack libunbound8:"$arch") > "$tmp/repack.log" 2>&1 ||
			{ cat "$tmp/repack.log"; rm -rf "$tmp"; refuse "dpkg-repack libunbound8 failed; cannot put it back afterwards"; }
	else
		rm -rf "$tmp"
		refuse "libunbound8 $oldver is installed and neither its .deb (in /var/cache/apt/archives) nor dpkg-repack is here to put it back afterwards"
	fi
	saved=$(ls "$tmp"/libunbound8_*.deb)
	echo "test_deb: libunbound8 $oldver is installed; saved as $saved, put back at the end"
elif [ -n "$oldlib" ] && [ "$oldlib" != not-installed ]; then
	rm -rf "$tmp"
	refuse "libunbound8 is in state $oldlib; fix it first (apt-get install -f)"
fi

# cleanup: stop our unbound, purge what we installed, restore what was
# there, remove what we created. Runs on every exit.
cleanup() {
	[ -z "$pid" ] || kill -KILL "$pid" 2>/dev/null
	rm -f "$snippet"
	added_deps
	purge="unbound unbound-anchor $deps"
	[ "$oldlib" = installed ] || purge="$purge libunbound8"
	timeout 300 apt-get purge -y -q $purge > "$tmp/purge.log" 2>&1 ||
		{ cat "$tmp/purge.log"; echo "test_deb: FAIL: apt-get purge failed"; rc=1; }
	if [ "$oldlib" = installed ]; then
		timeout 300 apt-get install -y -q --allow-downgrades "$saved" > "$tmp/restore.log" 2>&1 ||
			{ cat "$tmp/restore.log"; echo "test_deb: FAIL: could not put back libunbound8 $oldver from $saved"; rc=1; }
	fi
	# (a Debian 13 root without the passwd package has no userdel; the
	# account goes with the root)
	[ $had_user = 1 ] || ! getent passwd unbound >/dev/null || ! command -v userdel >/dev/null || userdel unbound
	[ $had_group = 1 ] || ! getent group unbound >/dev/null || ! command -v groupdel >/dev/null || groupdel unbound
	[ $made_policy = 0 ] || rm -f /usr/sbin/policy-rc.d
	rm -rf "$tmp"
}
# added_deps: the packages apt added as dependencies since $tmp/before, in
# deps (purged at the end).
added_deps() {
	[ -f "$tmp/before" ] || return 0
	dpkg-query -W -f='${Package}:${Architecture} ${db:Status-Status}\n' | sort > "$tmp/after"
	deps=$(comm -13 "$tmp/before" "$tmp/after" | awk '$2 == "installed" { sub(/:.*/, "", $1); print $1 }' |
		grep -vxE 'unbound|unbound-anchor|libunbound8' | tr '\n' ' ')
}
rc=0
trap 'cleanup; exit $rc' EXIT
trap 'rc=1; exit' INT TERM

if [ ! -e /usr/sbin/policy-rc.d ]; then
	made_policy=1
	printf '#!/bin/sh\n# test_deb.sh: no service starts while it installs packages.\nexit 101\n' > /usr/sbin/policy-rc.d
	chmod 755 /usr/sbin/policy-rc.d
fi
# Packages apt adds as dependencies are purged again at the end.
dpkg-query -W -f='${Package}:${Architecture} ${db:Status-Status}\n' | sort > "$tmp/before"

# The same port for every run, so that the statistics compare.
port=$("${PYTHON:-python3}" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cp "$top/conf/example.test.zone" "$tmp/example.test.zone"
chmod 644 "$tmp/example.test.zone"
edit="# Added by testcode/test_deb.sh: an operator's edit, that upgrades keep."

# write_snippet: Debian's unbound.conf includes unbound.conf.d/*.conf;
# this snippet sorts last, so it wins over remote-control.conf. The demo's
# settings: loopback, the hyperlocal zone the RFC 8806 way, the root
# stubbed to a dead loopback port, iterator only (no trust anchor
# fetched); remote control on a socket of the test's own; extended
# statistics, as scrapers set them, where the fork's own are.
write_snippet() {
	cat > "$snippet" <<EOF
# Written by testcode/test_deb.sh, removed when it ends.
server:
	interface: 127.0.0.1
	port: $port
	do-ip6: no
	use-syslog: no
	logfile: ""
	pidfile: "$tmp/unbound.pid"
	module-config: "iterator"
	local-zone: "test." nodefault
	outgoing-interface: 127.0.0.1
	do-not-query-localhost: yes
	extended-statistics: yes
stub-zone:
	name: "."
	stub-addr: 127.0.0.1@9
auth-zone:
	name: "example.test."
	zonefile: "$tmp/example.test.zone"
	for-downstream: no
	for-upstream: yes
	fallback-enabled: no
remote-control:
	control-enable: yes
	control-interface: "$tmp/unbound.ctl"
	control-use-cert: no
EOF
}

# serve_check NAME: start /usr/sbin/unbound with /etc/unbound/unbound.conf
# as the service does, query it, keep the names of its statistics in
# $tmp/stats.NAME, stop it by PID.
serve_check() {
	# As the service does before it starts the daemon (ExecStartPre).
	/usr/libexec/unbound-helper root_trust_anchor_update > "$tmp/helper.log" 2>&1 ||
		{ cat "$tmp/helper.log"; rc=1; fail "$1: unbound-helper root_trust_anchor_update failed"; }
	timeout 30 /usr/sbin/unbound-checkconf > "$tmp/checkconf" 2>&1 ||
		{ cat "$tmp/checkconf"; rc=1; fail "$1: unbound-checkconf rejects /etc/unbound/unbound.conf"; }
	echo "  ok: $1: unbound-checkconf /etc/unbound/unbound.conf"
	/usr/sbin/unbound -d > "$tmp/unbound.log" 2>&1 &
	pid=$!
	answer=""
	i=0
	while [ $i -lt 40 ]; do
		kill -0 "$pid" 2>/dev/null || { cat "$tmp/unbound.log"; rc=1; fail "$1: unbound exited at start"; }
		answer=$(timeout 5 dig @127.0.0.1 -p "$port" +short +time=1 +tries=1 www.example.test A 2>/dev/null)
		[ -z "$answer" ] || break
		sleep 0.25
		i=$((i + 1))
	done
	[ "$answer" = 192.0.2.80 ] ||
		{ cat "$tmp/unbound.log"; rc=1; fail "$1: www.example.test A: got '$answer', want 192.0.2.80"; }
	echo "  ok: $1: www.example.test A 192.0.2.80 from /usr/sbin/unbound on 127.0.0.1@$port"
	# Debian's default configuration uses nothing that a known unfixed
	# CVE needs: no warning of one (doc/security-status.md)
	! grep -q 'CVE-20' "$tmp/unbound.log" ||
		{ cat "$tmp/unbound.log"; rc=1; fail "$1: a CVE warning with Debian's default configuration"; }
	timeout 30 /usr/sbin/unbound-control -s "$tmp/unbound.ctl" stats_noreset > "$tmp/stats.out" 2>&1 ||
		{ cat "$tmp/stats.out"; rc=1; fail "$1: unbound-control stats_noreset failed"; }
	cut -d= -f1 "$tmp/stats.out" | sort > "$tmp/stats.$1"
	echo "  ok: $1: unbound-control stats_noreset, $(wc -l < "$tmp/stats.$1") statistics"

	# Stop it by PID; it must exit within 10 s.
	kill -TERM "$pid"
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 40 ]; do sleep 0.25; i=$((i + 1)); done
	kill -0 "$pid" 2>/dev/null && { rc=1; fail "$1: unbound did not stop on SIGTERM"; }
	wait "$pid" 2>/dev/null
	pid=""
	echo "  ok: $1: stopped by PID"
}

# check_edit WHEN: the operator's edit of unbound.conf is still there.
check_edit() {
	grep -qxF "$edit" /etc/unbound/unbound.conf ||
		{ rc=1; fail "$1: the edit of /etc/unbound/unbound.conf is gone (conffile replaced)"; }
	echo "  ok: $1: the edited /etc/unbound/unbound.conf is kept"
}

# install_debian: Debian's packages of this machine's release, from apt;
# dpkg keeps an edited conffile, as an operator answering its question
# with the default does.
install_debian() {
	timeout 600 apt-get install -y -q --no-install-recommends --allow-downgrades \
		-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
		unbound="$debver" unbound-anchor="$debver" libunbound8="$debver" > "$tmp/debian.log" 2>&1 ||
		{ cat "$tmp/debian.log"; rc=1; fail "apt-get install unbound=$debver failed"; }
	[ "$(dpkg-query -W -f='${Version}' unbound)" = "$debver" ] || { rc=1; fail "unbound is not at $debver"; }
}

if [ $upgrade = 1 ]; then
	debver=$(apt-cache policy unbound | awk '/Candidate:/ { print $2 }')
	case $debver in ""|"(none)") rc=1; fail "apt has no unbound package to start from";; esac
	echo "test_deb: installing Debian's unbound $debver"
	install_debian
	write_snippet
	echo "$edit" >> /etc/unbound/unbound.conf
	serve_check debian
fi

echo "test_deb: installing $pkgs $ver"
# shellcheck disable=SC2086
timeout 600 apt-get install -y -q --no-install-recommends --allow-downgrades \
	-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
	$debs > "$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; rc=1; fail "apt-get install failed"; }
added_deps
[ -z "$deps" ] || echo "  note: apt added dependencies $deps(purged at the end)"
for p in $pkgs; do
	[ "$(dpkg-query -W -f='${Version}' "$p:$arch")" = "$ver" ] || { rc=1; fail "$p $ver is not installed"; }
done
echo "  ok: installed $(dpkg-query -W -f='${Package} ${Version}\n' unbound)"

# /usr/sbin/unbound -V names the fork and the package's patch level.
/usr/sbin/unbound -V > "$tmp/version" 2>&1
grep -q "^Unbound Steady patch level $level, on Debian's unbound ${ver%%+steady*} .*known upstream CVEs not fixed: $BASE_UNFIXED_CVES ($BASE_OPEN_CVES open, $BASE_MITIGATED_CVES mitigated by the fork; " "$tmp/version" ||
	{ cat "$tmp/version"; rc=1; fail "/usr/sbin/unbound -V does not name Unbound Steady patch level $level, the base ${ver%%+steady*} and $BASE_UNFIXED_CVES unfixed CVEs, $BASE_OPEN_CVES open and $BASE_MITIGATED_CVES mitigated (base.pin)"; }
echo "  ok: $(grep '^Unbound Steady' "$tmp/version")"
# configured --with-xxhash, so the package never falls back to lookup3
grep -q -- '--with-xxhash' "$tmp/version" && grep -q '^Cache hash: xxh3 by default' "$tmp/version" ||
	{ cat "$tmp/version"; rc=1; fail "/usr/sbin/unbound -V: not configured --with-xxhash, or xxh3 is not the cache hash"; }
echo "  ok: $(grep '^Cache hash:' "$tmp/version")"

# The package's system account and its directory (debian/unbound.sysusers
# and unbound.tmpfiles since 1.25.0-1, maintainer scripts before): the
# account locked, with no login shell.
ent=$(getent passwd unbound) || { rc=1; fail "no unbound account after the install"; }
case $ent in
*:/usr/sbin/nologin) ;;
*) rc=1; fail "the unbound account has a login shell: $ent" ;;
esac
case $(getent shadow unbound | cut -d: -f2) in
'!'*|'*'*) ;;
*) rc=1; fail "the unbound account's password is not locked" ;;
esac
[ "$(stat -c %U /var/lib/unbound 2>/dev/null)" = unbound ] ||
	{ rc=1; fail "/var/lib/unbound is missing or not owned by unbound"; }
echo "  ok: the unbound account (locked, $(echo "$ent" | cut -d: -f6-7 | tr : ' ')) and /var/lib/unbound"

[ -f "$snippet" ] || write_snippet
serve_check fork
if [ $upgrade = 1 ]; then
	check_edit "upgrade to the fork"
	# every statistic Debian's unbound reported is still there
	missing=$(comm -23 "$tmp/stats.debian" "$tmp/stats.fork" | tr '\n' ' ')
	[ -z "$missing" ] || { rc=1; fail "statistics of Debian's unbound missing in the fork's: $missing"; }
	echo "  ok: the fork reports all $(wc -l < "$tmp/stats.debian") statistics of Debian's, and $(comm -13 "$tmp/stats.debian" "$tmp/stats.fork" | wc -l) more"
	# and the fork's own: cache health and the auth-zone I/O thread's
	for st in msg.cache.max_collisions rrset.cache.hash_repairs num.authzone.write num.authzone.xfr.apply; do
		grep -qx "$st" "$tmp/stats.fork" || { rc=1; fail "the fork does not report its statistic $st"; }
	done
	echo "  ok: the fork's own statistics are there (msg.cache.max_collisions, num.authzone.write, ...)"
	echo "test_deb: back to Debian's unbound $debver"
	install_debian
	serve_check debian-again
	check_edit "back to Debian's"
fi

# Purge (cleanup does it), then check what is left.
trap - EXIT
cleanup
[ $rc = 0 ] || exit 1
for p in unbound unbound-anchor; do
	dpkg -s "$p" >/dev/null 2>&1 && fail "$p is still known to dpkg after purge"
done
if [ "$oldlib" = installed ]; then
	[ "$(dpkg-query -W -f='${Version}' libunbound8:"$arch")" = "$oldver" ] ||
		fail "libunbound8 is not back at $oldver"
	echo "  ok: libunbound8 back at $oldver"
else
	dpkg -s libunbound8 >/dev/null 2>&1 && fail "libunbound8 is still known to dpkg after purge"
fi
[ ! -e /usr/sbin/unbound ] || fail "/usr/sbin/unbound is still there"
[ ! -e /etc/unbound ] || fail "/etc/unbound is still there"
echo "  ok: purged; dpkg -s unbound fails, /usr/sbin/unbound and /etc/unbound are gone"
echo "test_deb: ok"
