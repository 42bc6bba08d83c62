#!/bin/sh
# Run every test of Unbound Steady against a built fork: upstream's own
# suites in the build directory, then ours. Ends with "N passed, N failed".
usage="usage: run-tests.sh BUILDDIR [TEST ...]
  TEST names one of: upstream-unit upstream-tdir tdir-base-failures roundtrip fetch-errors
  base-change rebase-check deb-version security-status readme-facts
  patch-messages build-noparser
  deps-listen deps-listen-proof smoke install
  cache-unit cache-tsan cache-asan cache-model wildcard-hash wildcard-proof rpz-hash rpz-hash-proof
  scrapers monitoring stats-interval stats-passes stats-passes-dnscrypt libunbound-hashcheck
  hash-unit upstream-unit-lookup3 hash-unit-lookup3 dnssec dnssec-lookup3 upstream-unit-debug upstream-unit-nothreads upstream-unit-32 upstream-unit-tsan upstream-unit-asan cache-unit-32 zone-transfer zone-transfer-debug zone-transfer-nothreads zone-ixfr zone-ixfr-fail zone-inplace-lock zone-roundtrip zone-faults zone-kill zone-shutdown
  zone-reload zone-reload-nomem zone-reload-kind zone-zonemd zone-zonemd-pending zone-zonemd-reload zone-zonemd-off zone-zonemd-rollover zone-fast-reload zone-fast-reload-apply zone-fast-reload-tsan
  zone-rpz-full-transfer zone-url zone-rpz zone-rpz-memory zone-rpz-ixfr-fail zone-notify zone-valgrind zone-stall zone-stall-proof zone-tsan zone-oom
  control-lines soak
  fuzz-lruhash fuzz-zonefile-roundtrip fuzz-zonefile-read fuzz-config
  (wildcard-proof needs make hashbug, rpz-hash-proof and tdir-base-failures make stock,
  *-lookup3 make fork-lookup3,
  upstream-unit-debug and zone-transfer-debug make fork-debug,
  upstream-unit-nothreads and zone-transfer-nothreads make fork-nothreads,
  upstream-unit-32 and cache-unit-32 make fork-32, stats-passes-dnscrypt make fork-dnscrypt,
  upstream-unit-tsan, zone-tsan and zone-fast-reload-tsan make fork-tsan,
  upstream-unit-asan, zone-fast-reload, zone-fast-reload-apply, zone-reload-nomem, zone-rpz-ixfr-fail, zone-oom, soak and fuzz-config make fork-asan;
  SOAK_SECONDS, default 120, is the soak's length,
  fuzz-* make fork-fuzz; FUZZ_SECONDS, default 30, is each fuzz run,
  FUZZ_SEED, default 1, its seed) upstream-export check-series deb deb-upgrade
  (deb installs and purges the fork's packages on this machine, as root;
  deb-upgrade installs Debian's unbound from apt, the fork's over it, then
  Debian's again, and purges them)
  (default: all). Logs go to build/test/."

set -u
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
bld=$(cd "$1" && pwd) || exit 2
shift
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
logs=$top/build/test
mkdir -p "$logs"
[ $# -gt 0 ] || set -- upstream-unit upstream-tdir tdir-base-failures roundtrip fetch-errors \
	base-change rebase-check deb-version security-status readme-facts \
	patch-messages build-noparser \
	deps-listen deps-listen-proof smoke install \
	cache-unit cache-tsan cache-asan cache-model wildcard-hash wildcard-proof rpz-hash rpz-hash-proof \
	scrapers monitoring stats-interval stats-passes stats-passes-dnscrypt libunbound-hashcheck \
	hash-unit upstream-unit-lookup3 hash-unit-lookup3 dnssec dnssec-lookup3 upstream-unit-debug upstream-unit-nothreads upstream-unit-32 upstream-unit-tsan upstream-unit-asan cache-unit-32 zone-transfer zone-transfer-debug zone-transfer-nothreads zone-ixfr zone-ixfr-fail zone-inplace-lock zone-roundtrip zone-faults zone-kill zone-shutdown \
	zone-reload zone-reload-nomem zone-reload-kind zone-zonemd zone-zonemd-pending zone-zonemd-reload zone-zonemd-off zone-zonemd-rollover zone-fast-reload zone-fast-reload-apply zone-fast-reload-tsan \
	zone-rpz-full-transfer zone-url zone-rpz zone-rpz-memory zone-rpz-ixfr-fail zone-notify zone-valgrind zone-stall zone-stall-proof zone-tsan zone-oom \
	control-lines soak \
	fuzz-lruhash fuzz-zonefile-roundtrip fuzz-zonefile-read fuzz-config \
	upstream-export check-series deb deb-upgrade

# Debian's Python, where python3-dnspython is installed (a python3 earlier
# on PATH, e.g. from pyenv, may lack it).
# a fixed seed, so that a fuzz test that fails here fails again with the
# same tree; make fuzz explores with new seeds
FUZZ_SEED=${FUZZ_SEED:-1}
export FUZZ_SEED
# the i386 libraries of build/fork-32 (make fork-32)
i386_libs=$top/build/i386/root/usr/lib/i386-linux-gnu:$top/build/i386/root/lib/i386-linux-gnu
PYTHON=${PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3)}
passed=0 failed=0 failed_names=""
# run NAME CMD...: one test, its output in build/test/NAME.log; the log is
# shown when it fails, and its summary lines always.
run() {
	name=$1; shift
	start=$(date +%s)
	"$@" > "$logs/$name.log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	grep -E '^upstream( tdir)?( (PASS|FAIL|SKIP))?:' "$logs/$name.log"
	# A suite that counts its own tests ("...: N passed, M failed") adds
	# those counts; any other test counts as one.
	sub=$(grep -E '^[a-z ]+: [0-9]+ passed, [0-9]+ failed' "$logs/$name.log" | tail -n 1)
	np=1 nf=0
	if [ -n "$sub" ]; then
		np=$(echo "$sub" | sed 's/^[a-z ]*: \([0-9]*\) passed.*/\1/')
		nf=$(echo "$sub" | sed 's/.* \([0-9]*\) failed.*/\1/')
	fi
	if [ $rc -eq 0 ]; then
		echo "PASS: $name (${secs}s)"
	else
		sed 's/^/    /' "$logs/$name.log" | tail -n 60
		echo "FAIL: $name (${secs}s, exit $rc, log: $logs/$name.log)"
		[ -n "$sub" ] && [ "$nf" -gt 0 ] || nf=$((nf + 1))
		[ -n "$sub" ] || np=0
		failed_names="$failed_names $name"
	fi
	passed=$((passed + np))
	failed=$((failed + nf))
}

for t; do
	case $t in
	upstream-unit) run upstream-unit "$here/upstream-unit.sh" "$bld" ;;
	upstream-tdir) run upstream-tdir "$here/upstream-tdir.sh" "$bld" ;;
	tdir-base-failures) run tdir-base-failures "$here/test_tdir_base_failures.sh" "$top/build/stock" ;;
	roundtrip) run roundtrip "$here/test_roundtrip.sh" "$top/build/base" "$top/patches" ;;
	fetch-errors) run fetch-errors "$here/test_fetch_errors.sh" "$top/build/dl" ;;
	base-change) run base-change "$here/test_base_change.sh" "$top/build/base" "$top/patches" ;;
	rebase-check) run rebase-check "$here/test_rebase_check.sh" "$top/build/base" \
		"$top/build/dl" "$top/patches" ;;
	deb-version) run deb-version "$here/test_deb_version.sh" ;;
	security-status) run security-status "$here/test_security_status.sh" "$top/build/base" ;;
	readme-facts) run readme-facts "$here/test_readme_facts.sh" "$top/build/src" ;;
	build-noparser) run build-noparser "$here/test_build_noparser.sh" "$top/build/src" ;;
	deps-listen) run deps-listen env PYTHON="$PYTHON" "$here/test_deps_listen.sh" ;;
	deps-listen-proof) run deps-listen-proof env PYTHON="$PYTHON" "$here/test_deps_listen.sh" --proof ;;
	smoke) run smoke "$PYTHON" "$here/test_smoke.py" "$bld" ;;
	install) run install "$here/test_install.sh" "$bld" ;;
	cache-unit) run cache-unit sh "$here/cmocka/run.sh" "$bld" plain 3 ;;
	cache-tsan) run cache-tsan sh "$here/cmocka/run.sh" "$bld" thread 5 ;;
	cache-asan) run cache-asan sh "$here/cmocka/run.sh" "$bld" address 3 ;;
	cache-model) run cache-model env TESTS=lruhash_model MODEL_SEEDS=3000 \
		sh "$here/cmocka/run.sh" "$bld" address ;;
	wildcard-hash) run wildcard-hash "$PYTHON" "$here/test_wildcard_hash.py" "$bld" ;;
	wildcard-proof) run wildcard-proof env PYTHON="$PYTHON" \
		"$here/test_wildcard_proof.sh" "$top/build/fork-hashbug" ;;
	rpz-hash) run rpz-hash "$PYTHON" "$here/test_rpz_hash.py" "$bld" ;;
	rpz-hash-proof) run rpz-hash-proof "$PYTHON" "$here/test_rpz_hash.py" \
		"$top/build/stock" --expect-pileup ;;
	libunbound-hashcheck) run libunbound-hashcheck \
		"$here/test_libunbound_hashcheck.sh" "$bld" ;;
	stats-interval) run stats-interval "$PYTHON" "$here/test_stats_interval.py" "$bld" ;;
	stats-passes) run stats-passes "$PYTHON" "$here/test_stats_passes.py" "$bld" ;;
	stats-passes-dnscrypt) run stats-passes-dnscrypt "$PYTHON" "$here/test_stats_passes.py" \
		"$top/build/fork-dnscrypt" --dnscrypt ;;
	monitoring) run monitoring "$PYTHON" "$here/test_monitoring.py" "$bld" "$top/build/src" ;;
	scrapers) run scrapers "$PYTHON" "$here/test_scrapers.py" "$bld" \
		"$top/build/src" "$top/build/base" ;;
	hash-unit) run hash-unit "$here/test_hash.sh" "$bld" ;;
	upstream-unit-lookup3) run upstream-unit-lookup3 "$here/upstream-unit.sh" "$top/build/fork-lookup3" ;;
	upstream-unit-tsan) run upstream-unit-tsan "$here/upstream-unit.sh" "$top/build/fork-tsan" ;;
	upstream-unit-asan) run upstream-unit-asan "$here/upstream-unit.sh" "$top/build/fork-asan" ;;
	hash-unit-lookup3) run hash-unit-lookup3 "$here/test_hash.sh" "$top/build/fork-lookup3" ;;
	dnssec) run dnssec "$PYTHON" "$here/test_dnssec.py" "$bld" ;;
	dnssec-lookup3) run dnssec-lookup3 "$PYTHON" "$here/test_dnssec.py" "$top/build/fork-lookup3" ;;
	upstream-unit-debug) run upstream-unit-debug "$here/upstream-unit.sh" "$top/build/fork-debug" ;;
	upstream-unit-32) run upstream-unit-32 env LD_LIBRARY_PATH="$i386_libs" \
		"$here/upstream-unit.sh" "$top/build/fork-32" ;;
	cache-unit-32) run cache-unit-32 env CC="gcc -m32" LD_LIBRARY_PATH="$i386_libs" \
		sh "$here/cmocka/run.sh" "$top/build/fork-32" plain 3 ;;
	upstream-unit-nothreads) run upstream-unit-nothreads "$here/upstream-unit.sh" "$top/build/fork-nothreads" ;;
	# the daemon of the checking build (asserts, lock checks), with and
	# without the I/O thread; the lock checker writes its ublocktrace.N
	# files to the current directory
	zone-transfer-debug) mkdir -p "$logs/zone-transfer-debug.d"
		run zone-transfer-debug sh -c 'cd "$4" && rm -f ublocktrace.* && for m in yes no; do "$1" "$2/test_zone_transfer.py" "$3" --io-thread $m || exit 1; done' \
		sh "$PYTHON" "$here" "$top/build/fork-debug" "$logs/zone-transfer-debug.d" ;;
	zone-transfer-nothreads) run zone-transfer-nothreads "$PYTHON" "$here/test_zone_transfer.py" \
		"$top/build/fork-nothreads" --no-thread-support ;;
	zone-transfer) run zone-transfer sh -c 'for m in yes no; do "$1" "$2/test_zone_transfer.py" "$3" --io-thread $m || exit 1; done' \
		sh "$PYTHON" "$here" "$bld" ;;
	zone-faults) run zone-faults sh -c 'for m in yes no; do "$1" "$2/test_zone_faults.py" "$3" --io-thread $m || exit 1; done' \
		sh "$PYTHON" "$here" "$bld" ;;
	zone-ixfr) run zone-ixfr sh -c 'for m in yes no; do "$1" "$2/test_zone_ixfr.py" "$3" --io-thread $m || exit 1; done' \
		sh "$PYTHON" "$here" "$bld" ;;
	zone-ixfr-fail) run zone-ixfr-fail sh -c 'for m in yes no; do "$1" "$2/test_zone_ixfr_fail.py" "$3" --io-thread $m || exit 1; done' \
		sh "$PYTHON" "$here" "$bld" ;;
	zone-roundtrip) run zone-roundtrip sh -c 'for m in yes no; do "$1" "$2/test_zone_roundtrip.py" "$3" --io-thread $m || exit 1; done' \
		sh "$PYTHON" "$here" "$bld" ;;
	zone-kill) run zone-kill "$PYTHON" "$here/test_zone_kill.py" "$bld" ;;
	zone-shutdown) run zone-shutdown "$PYTHON" "$here/test_zone_shutdown.py" "$bld" ;;
	zone-reload) run zone-reload "$PYTHON" "$here/test_zone_reload.py" "$bld" ;;
	zone-reload-nomem) run zone-reload-nomem "$PYTHON" "$here/test_zone_reload_nomem.py" \
		"$top/build/fork-asan" ;;
	zone-inplace-lock) run zone-inplace-lock "$PYTHON" "$here/test_zone_inplace_lock.py" "$bld" ;;
	zone-reload-kind) run zone-reload-kind sh -c 'for m in yes no; do "$1" "$2/test_zone_reload_kind.py" "$3" --io-thread $m || exit 1; done' \
		sh "$PYTHON" "$here" "$bld" ;;
	zone-zonemd) run zone-zonemd "$PYTHON" "$here/test_zone_zonemd.py" "$bld" \
		--io-check ;;
	# zone-zonemd runs it with the auth-zone I/O thread, this without
	zone-zonemd-pending) run zone-zonemd-pending "$PYTHON" "$here/test_zone_zonemd.py" "$bld" \
		--io-thread no ;;
	# the I/O thread keeps the check pending over the reload
	zone-zonemd-off) run zone-zonemd-off "$PYTHON" "$here/test_zone_zonemd.py" "$bld" \
		--disable-at-reload --io-thread yes ;;
	# the lookup ends while the I/O thread applies serial 2
	zone-zonemd-rollover) run zone-zonemd-rollover "$PYTHON" "$here/test_zone_zonemd.py" "$bld" \
		--rollover --release-delay 0 --io-thread yes ;;
	zone-zonemd-reload) run zone-zonemd-reload sh -c 'for m in yes no; do "$1" "$2/test_zone_zonemd_reload.py" "$3" --io-thread $m || exit 1; done' \
		sh "$PYTHON" "$here" "$bld" ;;
	# fast_reload with and without +p under ASan; under TSan without +p
	# only: with +p, TSan reports races in upstream's own +p code
	# (fr_atomic_copy_cfg, acl_list_swap_tree), none in the fork's.
	zone-fast-reload) run zone-fast-reload sh -c '"$1" "$2/test_zone_fast_reload.py" "$3" && "$1" "$2/test_zone_fast_reload.py" "$3" --nopause' \
		sh "$PYTHON" "$here" "$top/build/fork-asan" ;;
	# a transfer applied while fast_reload reads the zonefiles, after
	# and before its comparison of the zones, with and without +p
	zone-fast-reload-apply) run zone-fast-reload-apply sh -c 'for o in "" --nopause --apply-first "--apply-first --nopause --zone-set" --queued-apply --zonemd-hash "--zonemd-hash --nopause --zone-set" "--ixfr-copy --zone-set" "--ixfr-copy --nopause" "--ixfr-copy --apply-first"; do "$1" "$2/test_zone_fast_reload_apply.py" "$3" $o || exit 1; done' \
		sh "$PYTHON" "$here" "$top/build/fork-asan" ;;
	# and the held write, apply, IXFR copy and ZONEMD hash of the apply
	# test, under TSan too
	zone-fast-reload-tsan) run zone-fast-reload-tsan env \
		TSAN_OPTIONS="second_deadlock_stack=1 suppressions=$here/tsan-stock.supp" \
		sh -c '"$1" "$2/test_zone_fast_reload.py" "$3" || exit 1
		for o in "" --apply-first "--ixfr-copy --zone-set" --zonemd-hash; do
			"$1" "$2/test_zone_fast_reload_apply.py" "$3" $o || exit 1; done' \
		sh "$PYTHON" "$here" "$top/build/fork-tsan" ;;
	zone-rpz-full-transfer) run zone-rpz-full-transfer sh -c 'for m in yes no; do "$1" "$2/test_zone_rpz_full_transfer.py" "$3" --io-thread $m || exit 1; done; "$1" "$2/test_zone_rpz_full_transfer.py" "$3" --names 2000 --replace 1100' \
		sh "$PYTHON" "$here" "$bld" ;;
	zone-url) run zone-url "$PYTHON" "$here/test_zone_url.py" "$bld" ;;
	zone-rpz) run zone-rpz "$PYTHON" "$here/test_zone_rpz.py" "$bld" ;;
	zone-rpz-memory) run zone-rpz-memory "$PYTHON" "$here/test_zone_rpz_memory.py" "$bld" ;;
	zone-rpz-ixfr-fail) run zone-rpz-ixfr-fail sh -c 'for m in yes no; do "$1" "$2/test_zone_ixfr_fail.py" "$3" --io-thread $m --rpz || exit 1; done' \
		sh "$PYTHON" "$here" "$top/build/fork-asan" ;;
	patch-messages) run patch-messages "$PYTHON" "$here/test_patch_messages.py" "$top/patches" ;;
	zone-notify) run zone-notify "$PYTHON" "$here/test_zone_notify.py" "$bld" ;;
	zone-valgrind) run zone-valgrind "$PYTHON" "$here/test_zone_shutdown.py" "$bld" --valgrind ;;
	zone-stall) run zone-stall "$PYTHON" "$here/test_zone_stall.py" "$bld" ;;
	zone-stall-proof) run zone-stall-proof "$PYTHON" "$here/test_zone_stall.py" "$bld" \
		--io-thread no --expect-stall --updates 1 ;;
	zone-tsan) run zone-tsan "$here/test_zone_tsan.sh" "$top/build/fork-tsan" ;;
	zone-oom) run zone-oom "$PYTHON" "$here/test_zone_oom.py" "$top/build/fork-asan" ;;
	control-lines) run control-lines "$PYTHON" "$here/test_control_lines.py" "$bld" ;;
	soak) run soak "$PYTHON" "$here/soak.py" "$top/build/fork-asan" \
		--duration "${SOAK_SECONDS:-120}" ;;
	fuzz-lruhash) run fuzz-lruhash "$here/fuzz/run.sh" "$top/build/fork-fuzz" \
		lruhash_model "${FUZZ_SECONDS:-30}" ;;
	fuzz-zonefile-roundtrip) run fuzz-zonefile-roundtrip "$here/fuzz/run.sh" \
		"$top/build/fork-fuzz" zonefile_roundtrip "${FUZZ_SECONDS:-30}" ;;
	fuzz-zonefile-read) run fuzz-zonefile-read "$here/fuzz/run.sh" \
		"$top/build/fork-fuzz" zonefile_read "${FUZZ_SECONDS:-30}" ;;
	fuzz-config) run fuzz-config "$PYTHON" "$here/test_fuzz_config.py" \
		"$top/build/fork-asan" 50 "$FUZZ_SEED" ;;
	upstream-export) run upstream-export "$here/test_upstream_export.sh" \
		"$top/build/base" "$top/build/dl" ;;
	check-series) run check-series "$top/scripts/check-series.sh" --last 3 \
		"$top/build/base" "$top/patches" "$top/build/check-series" ;;
	deb) run deb sh -c 'make -C "$1" deb && "$2/test_deb.sh" "$1/build/deb"' sh "$top" "$here" ;;
	deb-upgrade) run deb-upgrade sh -c 'make -C "$1" deb && "$2/test_deb.sh" "$1/build/deb" --upgrade' \
		sh "$top" "$here" ;;
	*) echo "run-tests: unknown test $t" >&2; echo "$usage" >&2; exit 2 ;;
	esac
done

[ -z "$failed_names" ] || echo "failed:$failed_names"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
