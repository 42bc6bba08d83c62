#!/bin/sh
# Run upstream's tdir tests with upstream's runner (testcode/mini_tdir.sh)
# in a configured build directory. Default: the tests that use auth-zones,
# zone transfer, ZONEMD or RPZ. The tests whose unbound fetches a zone from
# a primary or URL run twice: as they are (auth-zone-io-thread: yes, the
# default) and with auth-zone-io-thread: no added to their server: clause,
# so both ways of applying and writing transfers are tested.
usage="usage: upstream-tdir.sh BUILDDIR [TEST.tdir ...]"

set -u
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
bld=$(cd "$1" && pwd) || exit 2
shift
given="$*"
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
# upstream's auth-load-thread branch has tests of its load thread: run them
# by default too where the tree has them
if [ -z "$given" ]; then
	# those of newer bases: auth_load on the auth-load-thread branch,
	# fast_reload and the transfer limits since 1.23-1.25
	for t in "$srcdir"/testdata/auth_load*.tdir \
		"$srcdir"/testdata/fast_reload*.tdir \
		"$srcdir"/testdata/auth_https_origin.tdir \
		"$srcdir"/testdata/auth_transfer_limit.tdir; do
		[ -d "$t" ] && set -- "$@" "$(basename "$t")"
	done
fi
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
passed=0 failed=0 skipped=0
# run_all NOTE: every test once; NOTE is added to the result lines
run_all() {
	sh ../testcode/mini_tdir.sh -q clean
	for t in "$@"; do
		name=$(basename "$t" .tdir)
		[ -n "$note" ] && ! grep -qE '^[[:space:]]*(master|primary|url):' \
			"$name.tdir"/*.conf 2>/dev/null && continue
		sh ../testcode/mini_tdir.sh -a ../.. -q exe "$name.tdir" > /dev/null 2>&1
		# The .pre scripts pick a random free port and start the
		# servers later; a test running beside this one (make test runs
		# two at a time) may take the port meanwhile. Such a start is
		# run once more, and said so; a second one fails.
		if [ ! -f ".done-$name" ] && [ ! -f ".skip-$name" ] &&
			grep -q "can't bind socket: Address already in use" \
			"result.$name" 2>/dev/null; then
			echo "upstream tdir RETRY: $name$note (a port it picked was taken before its server started)"
			sh ../testcode/mini_tdir.sh -a ../.. -q exe "$name.tdir" > /dev/null 2>&1
		fi
		if [ -f ".done-$name" ]; then
			echo "upstream tdir PASS: $name$note"
			passed=$((passed + 1))
		elif [ -f ".skip-$name" ]; then
			echo "upstream tdir SKIP: $name$note (its .pre said a tool is missing)"
			skipped=$((skipped + 1))
		else
			echo "upstream tdir FAIL: $name$note"
			sed 's/^/    /' "result.$name" 2>/dev/null | tail -n 30
			failed=$((failed + 1))
		fi
	done
}
note=""
run_all "$@"
# the same tests with the zone transfers applied and written inline
if grep -q auth_zone_io_thread "$bld/config.h" 2>/dev/null ||
	grep -q "auth-zone-io-thread" "$srcdir/util/configlexer.lex"; then
	for t in "$@"; do
		# *.conf2 too: fast_reload tests load a second config,
		# and fast_reload refuses a change of auth-zone-io-thread
		for c in "$(basename "$t" .tdir).tdir"/*.conf \
			"$(basename "$t" .tdir).tdir"/*.conf[0-9]; do
			# unbound's configs only, not NSD's
			[ -f "$c" ] && ! grep -q provide-xfr "$c" || continue
			sed -i 's/^server:.*$/&\n\tauth-zone-io-thread: no/' "$c"
		done
	done
	note=" (auth-zone-io-thread: no)"
	run_all "$@"
fi
echo "upstream tdir: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
