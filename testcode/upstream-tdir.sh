#!/bin/sh
# Run upstream's tdir tests with upstream's runner (testcode/mini_tdir.sh)
# in a configured build directory. Default: the tests that use auth-zones,
# zone transfer, ZONEMD or RPZ.
usage="usage: upstream-tdir.sh BUILDDIR [TEST.tdir ...]"

set -u
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
bld=$(cd "$1" && pwd) || exit 2
shift
if [ $# -eq 0 ]; then
	set -- auth_axfr.tdir auth_https.tdir auth_tls.tdir \
		auth_tls_failcert.tdir blanks_cached_zone.tdir \
		blanks_https.tdir http_user_agent.tdir \
		rpz_reload.tdir zonemd_reload.tdir stub_auth_tc.tdir ede.tdir
	# Said in the output, not skipped silently:
	echo "upstream tdir NOT RUN: root_zonemd (its .pre downloads the root zone by AXFR from k.root-servers.net; tests here may reach loopback only)"
	echo "upstream tdir NOT RUN: acl_interface (needs unshare network namespaces for its interfaces; it tests ACLs, not zones)"
fi
srcdir=$(sed -n 's/^srcdir=[[:space:]]*//p' "$bld/Makefile")
case $srcdir in /*) ;; *) srcdir=$bld/$srcdir ;; esac
cd "$bld" || exit 2
make tests > tdir-build.log 2>&1 || { tail -n 20 tdir-build.log; exit 1; }
# The same copy upstream's longtest target makes for a build outside the
# source tree.
if [ ! "$srcdir/testdata" -ef ./testdata ]; then
	rm -rf testdata testcode && mkdir -p testdata testcode util
	cp -R "$srcdir"/testdata/*.sh "$srcdir"/testdata/*.tdir testdata/
	cp "$srcdir"/testcode/*.sh testcode/
	cp "$srcdir/util/iana_ports.inc" util/
fi
cd testdata || exit 2
unset NOTIFY_SOCKET
sh ../testcode/mini_tdir.sh -q clean
passed=0 failed=0 skipped=0
for t in "$@"; do
	name=$(basename "$t" .tdir)
	sh ../testcode/mini_tdir.sh -a ../.. -q exe "$name.tdir" > /dev/null 2>&1
	if [ -f ".done-$name" ]; then
		echo "upstream tdir PASS: $name"
		passed=$((passed + 1))
	elif [ -f ".skip-$name" ]; then
		echo "upstream tdir SKIP: $name (its .pre said a tool is missing)"
		skipped=$((skipped + 1))
	else
		echo "upstream tdir FAIL: $name"
		sed 's/^/    /' "result.$name" 2>/dev/null | tail -n 30
		failed=$((failed + 1))
	fi
done
echo "upstream tdir: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
