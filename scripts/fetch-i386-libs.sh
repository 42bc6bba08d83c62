#!/bin/sh
# Download the i386 libraries that a 32-bit build of Unbound and its tests
# link (OpenSSL, expat, cmocka; headers included) and unpack them under
# DEST/root.
# The machine is left as it is: no i386 architecture is added to dpkg
# (whose multiarch rule would also want the amd64 libraries at the same
# version), apt reads the machine's Debian entry (same URIs and keyring,
# so the index is verified as usual) for i386 in a private configuration.
# Runs again only when the package list changes.
usage="usage: fetch-i386-libs.sh DEST"

set -eu
[ $# -eq 1 ] || { echo "$usage" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"
dest=$(cd "$1" && pwd)
die() { echo "fetch-i386-libs: error: $*" >&2; exit 1; }
pkgs="libssl3 libssl-dev libexpat1 libexpat1-dev libcmocka0 libcmocka-dev"
[ "$(cat "$dest/.stamp" 2>/dev/null)" != "$pkgs" ] || exit 0

suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$suite" ] || die "no VERSION_CODENAME in /etc/os-release"
aptdir=$dest/apt
rm -rf "$dest/root" "$aptdir" "$dest/.stamp"
mkdir -p "$aptdir/lists/partial" "$aptdir/cache/archives/partial" \
	"$aptdir/parts" "$aptdir/debs" "$dest/root"
"$here/derive-src-entry.sh" --binary i386 "$suite" > "$aptdir/parts/i386.sources" ||
	die "could not derive an i386 entry from /etc/apt"
# an empty dpkg status: nothing is installed for i386, and nothing is
# installed by this
: > "$aptdir/status"
set -- -o Dir::Etc::SourceList=/dev/null \
	-o Dir::Etc::SourceParts="$aptdir/parts" \
	-o Dir::State::Lists="$aptdir/lists" \
	-o Dir::State::status="$aptdir/status" \
	-o Dir::Cache="$aptdir/cache" \
	-o APT::Architecture=i386 -o APT::Architectures=i386 \
	-o APT::Sandbox::User=root -q
log=$aptdir/apt.log
apt-get "$@" update > "$log" 2>&1 || { cat "$log" >&2; die "apt-get update of the $suite i386 index failed"; }
# shellcheck disable=SC2086 # the package list
(cd "$aptdir/debs" && apt-get "$@" download $pkgs) >> "$log" 2>&1 ||
	{ cat "$log" >&2; die "apt-get download $pkgs failed"; }
for deb in "$aptdir"/debs/*.deb; do
	dpkg-deb -x "$deb" "$dest/root"
done
# absolute links (libexpat.so -> /lib/i386-linux-gnu/...) point into root
find "$dest/root" -type l | while read -r link; do
	target=$(readlink "$link")
	case $target in /*) ln -sfn "$dest/root$target" "$link" ;; esac
done
echo "$pkgs" > "$dest/.stamp"
