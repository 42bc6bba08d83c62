#!/bin/sh
# Install the Debian packages needed to build and run the fork, or to test
# it; does nothing when all are present.
usage="usage: install-deps.sh [--list] [build|test|bench]
  build  (default) what make, make run, make install and make deb need:
         compilers, libraries, headers; no daemon
  test   build's packages plus the test tools (nsd, knot, dnsperf, ...).
         Packages that ship a service are installed with a policy-rc.d
         that stops apt from starting any service, and every service of
         a package this run installed is stopped and disabled, so no
         daemon runs or starts at boot with Debian's default config
  bench  test's packages plus the peers make bench compares the fork
         with (PowerDNS Recursor, Knot Resolver, BIND 9) and dnsdist,
         installed the same way, their services stopped and disabled
  --list print the packages of the group and exit"

set -eu
# build: Debian's build-depends of unbound (debian/control) we configure
# for, git for the patch work tree; fetch: apt's source client needs
# dpkg-dev; run: dig for make run's examples, dns-root-data for the root
# key at Debian's path (the installed fork and Debian's unbound.conf read it);
# mmdebstrap makes the Debian 13 root that make deb DIST=trixie builds in.
build_pkgs="build-essential pkg-config flex bison libtool autoconf dpkg-dev git mmdebstrap
libssl-dev libevent-dev libexpat1-dev libnghttp2-dev libsystemd-dev
libhiredis-dev libxxhash-dev libprotobuf-c-dev protobuf-c-compiler libfstrm-dev
python3-dev swig python3 bind9-dnsutils dns-root-data"
# test: peers and tools; ccache makes make check-series' repeated builds
# fast; dpkg-repack lets the deb test put back a libunbound8 it replaces;
# clang builds the libFuzzer targets (make fork-fuzz); locales for
# upstream's locale test; valgrind for zone-valgrind; prometheus for
# promtool (test monitoring; its service is kept from starting); strace
# counts unbound's system calls (control-lines); libclang-rt-dev has
# clang's sanitizer and libFuzzer runtimes (clang's packages only
# recommend them); systemd for systemd-analyze, which checks the drop-in
# of make install-systemd against Debian's unit (test install);
# gcc-multilib compiles the 32-bit build (make fork-32), whose i386
# libraries scripts/fetch-i386-libs.sh downloads without installing them;
# libsodium-dev the DNSCrypt build (make fork-dnscrypt). gdb reads the
# size of a struct from a build's debug information (struct_size in
# testcode/harness/zone.py) and holds one thread at a source line
# (testcode/harness/gdbstop.py).
test_pkgs="libcmocka-dev clang libclang-rt-dev python3-dnspython ldnsutils nsd
knot dnsperf rsync procps ccache dpkg-repack locales valgrind prometheus strace
systemd gcc-multilib libsodium-dev gdb"
# bench: the resolvers operators choose instead, and the load balancer of
# the scale-out benchmark (bench/peers.py, bench/scale_out.py).
bench_pkgs="pdns-recursor knot-resolver bind9 dnsdist"

list=0
[ "${1:-}" = --list ] && { list=1; shift; }
group=${1:-build}
case $group in
build) pkgs=$build_pkgs ;;
test) pkgs="$build_pkgs $test_pkgs" ;;
bench) pkgs="$build_pkgs $test_pkgs $bench_pkgs" ;;
*) echo "$usage" >&2; exit 2 ;;
esac
[ $# -le 1 ] || { echo "$usage" >&2; exit 2; }
[ $list = 0 ] || { echo $pkgs; exit 0; }

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

# No service may start while apt installs: a policy-rc.d that denies
# every action (exit 101), ours only when there is none, removed after.
policy=/usr/sbin/policy-rc.d made_policy=0
before=$(mktemp "${TMPDIR:-/tmp}/install-deps.XXXXXX")
cleanup() {
	[ $made_policy = 0 ] || rm -f "$policy"
	rm -f "$before"
}
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\n# install-deps.sh: no service starts while it installs packages.\nexit 101\n' > "$policy"
	chmod 755 "$policy"
	made_policy=1
fi
dpkg-query -W -f='${db:Status-Status} ${Package}\n' | awk '$1 == "installed" { print $2 }' | sort > "$before"

apt-get update -q >/dev/null
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >/dev/null

# Every package this run installed (with its dependencies): stop and
# disable its services, whatever the policy said, so none runs now or at
# boot. A service the machine had before is left alone.
new=$(dpkg-query -W -f='${db:Status-Status} ${Package}\n' | awk '$1 == "installed" { print $2 }' |
	sort | comm -13 "$before" -)
for p in $new; do
	for f in $(dpkg -L "$p" 2>/dev/null | grep -E '^(/usr)?/lib/systemd/system/[^/@]+\.(service|socket)$|^/etc/init\.d/[^/]+$'); do
		[ -e "$f" ] || continue
		unit=$(basename "$f")
		case $f in
		/etc/init.d/*)
			"$f" stop >/dev/null 2>&1 || true
			update-rc.d "$unit" disable >/dev/null 2>&1 || true ;;
		*)
			if [ -d /run/systemd/system ]; then
				systemctl stop "$unit" >/dev/null 2>&1 || true
				systemctl disable "$unit" >/dev/null 2>&1 || true
			else
				deb-systemd-helper disable "$unit" >/dev/null 2>&1 || true
			fi ;;
		esac
		echo "install-deps: $p: service $unit stopped and disabled (a test tool, not a service of this host)"
	done
done
