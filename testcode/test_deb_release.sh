#!/bin/sh
# The fork's packages for another Debian release, tested in a root of that
# release (scripts/debian-root.sh) as an operator's machine: a copy of the
# root, in a network namespace of its own with only loopback, so nothing
# leaves the machine and the copy is thrown away at the end.
#  1. testcode/test_deb.sh --upgrade: the release's own unbound from apt,
#     configured and run; the fork's packages over it (conffiles kept, the
#     same configuration answers, Debian's statistics plus the fork's);
#     back to Debian's, which runs with the edit kept; purged.
#  2. testcode/test_deb_policy.sh: what apt upgrade does with the fork
#     installed, with and without the fork's apt preferences file, and
#     when Debian publishes a newer version (a re-versioned copy of the
#     release's package in a local repository stands for it).
usage="usage: test_deb_release.sh DEBDIR ROOTDIR
  DEBDIR: make deb DIST=RELEASE's output (build/deb-trixie); ROOTDIR: a
  root of that release with bind9-dnsutils, python3-minimal and
  dns-root-data (make test-deb-trixie makes both). Needs root, the
  release's archive (to download the packages once, before the network
  is cut), and dpkg-scanpackages (dpkg-dev)."

set -eu
[ $# -eq 2 ] || { echo "$usage" >&2; exit 2; }
debdir=$(cd "$1" && pwd) || exit 2
root=$(cd "$2" && pwd) || exit 2
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
fail() { echo "test_deb_release: FAIL: $*"; exit 1; }
[ "$(id -u)" = 0 ] || fail "needs root"
ver=$(cat "$debdir/VERSION") || fail "no $debdir/VERSION (run make deb DIST=...)"
arch=$(dpkg --print-architecture)
release=$(. "$root/etc/os-release" && echo "$VERSION_CODENAME")
case $ver in
*~deb$(. "$root/etc/os-release" && echo "$VERSION_ID")) ;;
*) fail "$ver is not built for $release (its ~debN is not the root's VERSION_ID)" ;;
esac

run=$root.run
rm -rf "$run"
trap 'rm -rf "$run"' EXIT
trap 'exit 1' INT TERM
cp -a "$root" "$run"
in_run() { "$top/scripts/in-root.sh" "$@"; }

# The test's files under /steady in the copy.
mkdir -p "$run/steady/testcode" "$run/steady/scripts" "$run/steady/conf" "$run/steady/deb"
cp "$here/test_deb.sh" "$here/test_deb_policy.sh" "$run/steady/testcode/"
cp "$top/scripts/pin.sh" "$run/steady/scripts/"
cp "$top/base.pin" "$run/steady/"
cp "$top/conf/example.test.zone" "$run/steady/conf/"
cp "$debdir"/*_"$ver"_*.deb "$debdir/VERSION" "$debdir/PATCHLEVEL" "$run/steady/deb/"
[ ! -f "$debdir/unbound-steady.pref" ] || cp "$debdir/unbound-steady.pref" "$run/steady/deb/"

# Every package the tests install, downloaded now into apt's cache: the
# release's unbound (the candidate of its index) and what it and the
# fork's packages depend on. After this, nothing needs the network.
echo "test_deb_release: $release: updating the index, downloading the packages"
in_run "$run" apt-get update -q > "$run/steady/apt.log" 2>&1 || { cat "$run/steady/apt.log"; fail "apt-get update failed in the $release root"; }
debver=$(in_run "$run" apt-cache policy unbound | awk '/Candidate:/ { print $2 }')
case $debver in ""|"(none)") fail "the $release index has no unbound";; esac
in_run "$run" apt-get install -y -q --download-only --no-install-recommends \
	unbound="$debver" libunbound8="$debver" unbound-anchor="$debver" >> "$run/steady/apt.log" 2>&1 ||
	{ cat "$run/steady/apt.log"; fail "could not download $release's unbound $debver"; }
# shellcheck disable=SC2046
in_run "$run" sh -c 'cd /steady/deb && apt-get install -y -q --download-only --no-install-recommends --allow-downgrades "$@"' sh \
	$(for p in unbound libunbound8 unbound-anchor; do echo "./${p}_${ver}_$arch.deb"; done) >> "$run/steady/apt.log" 2>&1 ||
	{ cat "$run/steady/apt.log"; fail "could not download the dependencies of the fork's packages"; }

# Debian's next version, as a security update would bring it: the
# release's packages with the last number of the version plus one, in a
# local repository that test_deb_policy.sh adds to apt's sources.
next=$(echo "$debver" | awk '{ n = $0; sub(/[0-9]+$/, "", n); m = substr($0, length(n) + 1); print n (m + 1) }')
repo=$run/srv/steady-next
mkdir -p "$repo"
for p in unbound libunbound8 unbound-anchor; do
	f=$run/var/cache/apt/archives/${p}_$(echo "$debver" | sed 's/:/%3a/')_$arch.deb
	[ -f "$f" ] || fail "no $f in apt's cache"
	x=$run/steady/repack.$p
	dpkg-deb -R "$f" "$x"
	sed -i "s/^Version: .*/Version: $next/" "$x/DEBIAN/control"
	dpkg-deb -b "$x" "$repo/${p}_${next}_$arch.deb" > /dev/null
	rm -rf "$x"
done
(cd "$repo" && dpkg-scanpackages -m . /dev/null > Packages 2>/dev/null) || fail "dpkg-scanpackages failed"

echo "test_deb_release: $release: upgrade and back (testcode/test_deb.sh --upgrade), loopback only"
in_run --net "$run" sh /steady/testcode/test_deb.sh /steady/deb --upgrade || fail "test_deb.sh --upgrade failed in the $release root"
echo "test_deb_release: $release: what apt upgrade does (testcode/test_deb_policy.sh), loopback only"
in_run --net "$run" sh /steady/testcode/test_deb_policy.sh /steady/deb "$debver" "$next" /srv/steady-next ||
	fail "test_deb_policy.sh failed in the $release root"
echo "test_deb_release: ok ($release, $ver)"
