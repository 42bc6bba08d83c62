#!/bin/sh
# The version policy of the fork's packages on a Debian release whose own
# unbound sorts above the fork (trixie's 1.26.2-0+deb13u1 over the fork's
# 1.26.1-1 base): what apt upgrade does in each state, and that the
# operator is told whenever the fork replaces a newer Debian version or
# is replaced by one. Run in a throwaway root (test_deb_release.sh), with
# every package already in apt's cache: it installs and purges unbound.
#  - the fork over Debian's DEBVER: the fork's preinst says that DEBVER is
#    newer and what that means;
#  - no preferences file: apt upgrade puts DEBVER back, and the fork's
#    prerm says so;
#  - the fork's preferences file installed: apt upgrade keeps the fork,
#    and unbound -V says how many known CVEs its base lacks;
#  - Debian publishes NEXT (REPO): apt upgrade installs it over the fork
#    in spite of the preferences file, and the prerm says so; the fork
#    installed over NEXT is replaced by it again.
usage="usage: test_deb_policy.sh DEBDIR DEBVER NEXT REPO
  DEBDIR: the fork's .debs with VERSION and unbound-steady.pref; DEBVER:
  the release's unbound in apt's index; NEXT: Debian's next version, in
  the local repository directory REPO (a Packages file), not yet in
  apt's sources."

set -u
[ $# -eq 4 ] || { echo "$usage" >&2; exit 2; }
debdir=$1 debver=$2 next=$3 repo=$4
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$top/scripts/pin.sh"
pin_load "$top/base.pin" || exit 2
fails=0
ok() { echo "  ok: $*"; }
bad() { echo "  FAIL: $*"; fails=$((fails + 1)); }
die() { echo "test_deb_policy: FAIL: $*"; exit 1; }
export DEBIAN_FRONTEND=noninteractive
arch=$(dpkg --print-architecture)
ver=$(cat "$debdir/VERSION") || die "no $debdir/VERSION"
pref=$debdir/unbound-steady.pref
pkgs="unbound libunbound8 unbound-anchor"
tmp=$(mktemp -d)
syslog_pid=""
trap '[ -z "$syslog_pid" ] || kill "$syslog_pid"; rm -rf "$tmp"' EXIT
apt_opts="-y -q --no-install-recommends -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold"

dpkg --compare-versions "$debver" gt "$ver" ||
	die "Debian's $debver does not sort above the fork's $ver: nothing to check here"
[ -f "$pref" ] || die "make deb wrote no $pref, though Debian's $debver sorts above the fork"
grep -qx "Pin: version $debver" "$pref" && ok "unbound-steady.pref holds back $debver" ||
	bad "unbound-steady.pref does not name $debver: $(cat "$pref")"

# A syslog of the test's own on /dev/log (in-root.sh gives the root a
# /dev of its own): the notices must reach syslog too.
[ ! -e /dev/log ] || die "/dev/log exists: this is not a throwaway root"
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("/dev/log")
with open(sys.argv[1], "ab", buffering=0) as f:
    while True:
        f.write(s.recv(65536) + b"\n")
' "$tmp/syslog" &
syslog_pid=$!
i=0
while [ ! -S /dev/log ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
[ -S /dev/log ] || die "the test's syslog did not start"

# versions: the installed version of each of $pkgs, on one line
versions() {
	for p in $pkgs; do dpkg-query -W -f='${Version} ' "$p:$arch" 2>/dev/null || echo "none "; done
}
# expect_all VERSION WHEN: each of $pkgs is installed at VERSION
expect_all() {
	got=$(versions)
	want=$(for p in $pkgs; do printf '%s ' "$1"; done)
	[ "$got" = "$want" ] && ok "$2: $pkgs at $1" || bad "$2: want $pkgs at $1, have: $got"
}
# install_fork LOG: the fork's packages over what is installed
install_fork() {
	# shellcheck disable=SC2086
	(cd "$debdir" && apt-get install $apt_opts --allow-downgrades \
		$(for p in $pkgs; do echo "./${p}_${ver}_$arch.deb"; done)) > "$1" 2>&1 ||
		{ cat "$1"; die "installing the fork failed"; }
}
# upgrade LOG: apt-get upgrade, as an operator or unattended-upgrades runs it
upgrade() {
	# shellcheck disable=SC2086
	apt-get upgrade $apt_opts > "$1" 2>&1 || { cat "$1"; die "apt-get upgrade failed"; }
}
# notice LOG WORDS WHEN: the notice with WORDS (a fixed string) is in LOG;
# apt runs dpkg on a terminal of its own, so the lines end in CR LF.
notice() {
	tr '\r\n' '  ' < "$1" | sed 's/  */ /g' | grep -qF "$2" && ok "$3: the notice says \"$2\"" ||
		{ cat "$1"; bad "$3: no notice \"$2\" in apt's output"; }
	w=${2#NOTICE: }
	grep -F "unbound: " "$tmp/syslog" | grep -qF "$w" && ok "$3: and syslog has it" ||
		{ cat "$tmp/syslog"; bad "$3: syslog has no \"$w\""; }
}

echo "test_deb_policy: Debian's unbound $debver, then the fork $ver over it"
# shellcheck disable=SC2086
apt-get install $apt_opts unbound="$debver" libunbound8="$debver" unbound-anchor="$debver" > "$tmp/debian.log" 2>&1 ||
	{ cat "$tmp/debian.log"; die "installing Debian's $debver failed"; }
install_fork "$tmp/fork.log"
expect_all "$ver" "the fork over Debian's $debver"
notice "$tmp/fork.log" "NOTICE: Unbound Steady $ver replaces Debian's unbound $debver, which is newer" "installing the fork"

echo "test_deb_policy: state 1: the fork, no preferences file"
apt-get -s upgrade > "$tmp/sim1.log" 2>&1
grep -q "^Inst unbound \[$ver\] ($debver " "$tmp/sim1.log" && ok "apt-get -s upgrade would put Debian's $debver back" ||
	{ cat "$tmp/sim1.log"; bad "apt-get -s upgrade does not plan Debian's $debver"; }
upgrade "$tmp/up1.log"
expect_all "$debver" "apt-get upgrade without the preferences file"
notice "$tmp/up1.log" "NOTICE: Debian's unbound $debver replaces Unbound Steady $ver" "the replacement"

echo "test_deb_policy: state 2: the fork, with its preferences file"
install_fork "$tmp/fork2.log"
cp "$pref" /etc/apt/preferences.d/unbound-steady
apt-cache policy unbound > "$tmp/policy2.log" 2>&1
grep -q "Candidate: $ver\$" "$tmp/policy2.log" && ok "apt-cache policy: the candidate is the fork" ||
	{ cat "$tmp/policy2.log"; bad "apt-cache policy: the candidate is not the fork"; }
upgrade "$tmp/up2.log"
expect_all "$ver" "apt-get upgrade with the preferences file"
grep -q NOTICE "$tmp/up2.log" && bad "apt-get upgrade that changed nothing printed a notice" || ok "no package changed, no notice"
# Kept, but not silently: unbound -V names the base and its unfixed CVEs.
/usr/sbin/unbound -V > "$tmp/version" 2>&1
grep -q "on Debian's unbound ${ver%%+steady*} .*known upstream CVEs not fixed: $BASE_UNFIXED_CVES " "$tmp/version" &&
	ok "unbound -V: base ${ver%%+steady*}, $BASE_UNFIXED_CVES known CVEs not fixed" ||
	{ cat "$tmp/version"; bad "unbound -V does not name the base and its $BASE_UNFIXED_CVES unfixed CVEs"; }

echo "test_deb_policy: state 3: Debian publishes $next"
echo "deb [trusted=yes] file:$repo ./" > /etc/apt/sources.list.d/steady-next.list
# Only the new source is read again: the machine has no network here.
apt-get update -q -o Dir::Etc::SourceList=/etc/apt/sources.list.d/steady-next.list \
	-o Dir::Etc::SourceParts=- -o APT::Get::List-Cleanup=0 > "$tmp/update3.log" 2>&1 ||
	{ cat "$tmp/update3.log"; die "apt-get update of $repo failed"; }
upgrade "$tmp/up3.log"
expect_all "$next" "apt-get upgrade with the preferences file, once $next is published"
notice "$tmp/up3.log" "NOTICE: Debian's unbound $next replaces Unbound Steady $ver" "the replacement by $next"

echo "test_deb_policy: state 4: the fork over $next"
install_fork "$tmp/fork4.log"
notice "$tmp/fork4.log" "replaces Debian's unbound $next, which is newer" "installing the fork over $next"
apt-get -s upgrade > "$tmp/sim4.log" 2>&1
grep -q "^Inst unbound \[$ver\] ($next " "$tmp/sim4.log" && ok "apt-get -s upgrade would install $next: the file does not hold it back" ||
	{ cat "$tmp/sim4.log"; bad "apt-get -s upgrade does not plan $next"; }

# shellcheck disable=SC2086
apt-get purge -y -q $pkgs > "$tmp/purge.log" 2>&1 || { cat "$tmp/purge.log"; bad "apt-get purge failed"; }
rm -f /etc/apt/preferences.d/unbound-steady /etc/apt/sources.list.d/steady-next.list
kill "$syslog_pid"
syslog_pid=""
rm -f /dev/log
[ $fails -eq 0 ] && { echo "test_deb_policy: ok"; exit 0; }
echo "test_deb_policy: $fails check(s) failed"; exit 1
