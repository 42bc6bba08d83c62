#!/bin/sh
# Install the Debian packages needed to build, run and test the fork; does
# nothing when all are present.
usage="usage: install-deps.sh [--list]"

set -eu
# build: Debian's build-depends of unbound (debian/control) we configure for;
# fetch: apt's source client needs dpkg-dev; tests: peers and tools;
# ccache makes make check-series' repeated builds fast; dpkg-repack lets
# the deb test put back a libunbound8 it replaces; dns-root-data has the
# root key that Debian's unbound.conf (deb test) reads.
pkgs="build-essential pkg-config flex bison libtool autoconf dpkg-dev
libssl-dev libevent-dev libexpat1-dev libnghttp2-dev libsystemd-dev
libhiredis-dev libxxhash-dev libprotobuf-c-dev protobuf-c-compiler libfstrm-dev
python3-dev swig
libcmocka-dev python3 python3-dnspython ldnsutils bind9-dnsutils nsd knot dnsperf
rsync procps ccache dpkg-repack dns-root-data locales"
case "${1:-}" in
--list) echo $pkgs; exit 0 ;;
"") ;;
*) echo "$usage" >&2; exit 2 ;;
esac

missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -n "$missing" ] || exit 0
if [ "$(id -u)" != 0 ]; then
	echo "install-deps: missing Debian packages:$missing" >&2
	echo "install-deps: run as root: apt-get update && apt-get install$missing" >&2
	exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >/dev/null
