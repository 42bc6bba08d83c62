#!/bin/sh
# Run every test of Unbound Steady against a built fork: upstream's own
# suites in the build directories and ours, two at a time where they can
# share the machine. Ends with where the time went and "N passed, N failed".
usage="usage: run-tests.sh BUILDDIR [TEST ...]
  TEST names one of: upstream-unit upstream-tdir tdir-base-failures roundtrip fetch-errors
  base-change rebase-check deb-version security-status readme-facts
  patch-messages build-noparser
  deps-listen deps-listen-proof smoke install
  cache-unit cache-tsan cache-asan cache-model wildcard-hash wildcard-proof rpz-hash rpz-hash-proof
  scrapers monitoring stats-interval stats-passes stats-passes-dnscrypt libunbound-hashcheck
  hash-unit upstream-unit-lookup3 hash-unit-lookup3 dnssec dnssec-lookup3 upstream-unit-debug upstream-unit-nothreads upstream-unit-32 upstream-unit-tsan upstream-unit-asan cache-unit-32 zone-transfer zone-transfer-debug zone-lock-order zone-transfer-nothreads zone-ixfr zone-ixfr-fail zone-inplace-lock zone-roundtrip zone-faults zone-kill zone-shutdown
  zone-reload zone-reload-nomem zone-reload-kind zone-zonemd zone-zonemd-pending zone-zonemd-reload zone-zonemd-off zone-zonemd-kept zone-zonemd-rollover zone-fast-reload zone-fast-reload-apply zone-fast-reload-tsan
  zone-rpz-updates zone-health zone-journal zone-crash-points zone-rpz-steps zone-rpz-fail-closed zone-axfr-diff zone-url zone-rpz zone-rpz-memory zone-rpz-ixfr-fail zone-notify zone-valgrind zone-stall zone-stall-proof zone-tsan zone-oom
  zone-apply-nomem zone-alloc-sweep
  control-lines soak cve-warnings parse-ptrs
  fuzz-lruhash fuzz-zonefile-roundtrip fuzz-zonefile-read fuzz-config
  (wildcard-proof needs make hashbug, rpz-hash-proof and tdir-base-failures make stock,
  *-lookup3 make fork-lookup3,
  upstream-unit-debug, zone-transfer-debug and zone-lock-order make fork-debug,
  upstream-unit-nothreads and zone-transfer-nothreads make fork-nothreads,
  upstream-unit-32 and cache-unit-32 make fork-32, stats-passes-dnscrypt make fork-dnscrypt,
  upstream-unit-tsan, zone-tsan and zone-fast-reload-tsan make fork-tsan,
  upstream-unit-asan, zone-fast-reload, zone-fast-reload-apply, zone-reload-nomem, zone-rpz-ixfr-fail, zone-oom,
  zone-apply-nomem, zone-rpz-steps, zone-rpz-fail-closed, zone-axfr-diff, zone-alloc-sweep, soak and fuzz-config make fork-asan;
  SOAK_SECONDS, default 120, is the soak's length,
  fuzz-* make fork-fuzz; FUZZ_SECONDS, default 30, is each fuzz run,
  FUZZ_SEED, default 1, its seed) upstream-export check-series deb deb-upgrade
  (deb installs and purges the fork's packages on this machine, as root;
  deb-upgrade installs Debian's unbound from apt, the fork's over it, then
  Debian's again, and purges them)
  (default: all: those that start no daemon TEST_JOBS at a time, default
  3, under SCHED_IDLE, and beside them the daemon tests, most two at a
  time, then one at a time those that
  measure time, order events against a transfer or change the machine;
  named tests run one after the other, or TEST_JOBS at a time). Logs go to build/test/.
  Ends with the time of each build (STEADY_TIMES, as make test sets it)
  and test, the total since STEADY_TEST_START, and its budget."

set -u
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
bld=$(cd "$1" && pwd) || exit 2
shift
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
logs=$top/build/test
mkdir -p "$logs"
# the builds' times (make test's), read at the end; the builds that tests
# make themselves (check-series) are not among them
times_file=${STEADY_TIMES:-}
unset STEADY_TIMES
default=0
[ $# -gt 0 ] || default=1
# The default list. The tests in $pooled start no daemon (upstream's unit
# and replay tests, the cmocka and fuzz tests, the checks of the series
# and the packaging): they run TEST_JOBS at a time, longest first,
# under SCHED_IDLE. A chain ("a+b") runs in one job, one after the
# other: cache-asan and cache-model share build/fork's cmocka-address/.
# The daemon tests run beside them at normal priority, those of $paired
# two at a time, then the others one at a time, in this order: they wait
# on transfers, DS lookups and timeouts, and with them in the pool at the
# same priority (both CPUs busy), three of six runs failed (a fast_reload
# apply, zone-tsan's DS lookup, upstream's auth_transfer_limit and
# zone-faults; doc/ci-time.md).
[ $# -gt 0 ] || set -- check-series upstream-unit-asan upstream-unit-tsan fuzz-config \
	cache-asan+cache-model cache-tsan fuzz-zonefile-roundtrip fuzz-lruhash fuzz-zonefile-read \
	upstream-unit-debug upstream-unit-32 upstream-unit-lookup3 upstream-unit-nothreads \
	upstream-unit upstream-export cache-unit cache-unit-32 rebase-check base-change \
	roundtrip hash-unit hash-unit-lookup3 fetch-errors install patch-messages \
	libunbound-hashcheck deb-version security-status readme-facts build-noparser \
	zone-rpz-ixfr-fail zone-zonemd zone-fast-reload zone-reload zone-ixfr-fail zone-oom zone-apply-nomem \
	zone-zonemd-off zone-zonemd-kept zone-kill zone-valgrind zone-zonemd-pending zone-zonemd-rollover \
	wildcard-proof rpz-hash-proof zone-rpz-memory wildcard-hash zone-rpz-updates zone-health zone-journal zone-crash-points zone-rpz-steps zone-rpz-fail-closed zone-axfr-diff zone-alloc-sweep \
	stats-passes stats-passes-dnscrypt zone-transfer zone-transfer-debug zone-lock-order control-lines \
	zone-ixfr zone-roundtrip stats-interval zone-shutdown zone-reload-nomem \
	zone-transfer-nothreads zone-faults zone-rpz monitoring smoke zone-reload-kind dnssec \
	dnssec-lookup3 rpz-hash scrapers zone-url parse-ptrs \
	upstream-tdir tdir-base-failures zone-fast-reload-apply zone-tsan zone-fast-reload-tsan \
	zone-zonemd-reload soak zone-stall zone-stall-proof zone-inplace-lock \
	zone-notify cve-warnings deps-listen deps-listen-proof deb deb-upgrade
pooled="check-series upstream-unit-asan upstream-unit-tsan fuzz-config
	cache-asan+cache-model cache-tsan fuzz-zonefile-roundtrip fuzz-lruhash fuzz-zonefile-read
	upstream-unit-debug upstream-unit-32 upstream-unit-lookup3 upstream-unit-nothreads
	upstream-unit upstream-export cache-unit cache-unit-32 rebase-check base-change
	roundtrip hash-unit hash-unit-lookup3 fetch-errors install patch-messages
	libunbound-hashcheck deb-version security-status readme-facts build-noparser"
# The daemon tests that run two at a time, longest first: they wait on
# transfers and timers and keep well under one CPU busy each, and none
# has a time limit that a neighbour's load can break. Those left out run
# one at a time after them (only the pool's SCHED_IDLE work beside them):
# they measure time (the stall tests, the soak, zone-inplace-lock's and
# zone-zonemd-reload's answer waits, zone-notify's wakeups), set up an
# order of events against a transfer or a config read (the fast_reload
# apply tests, zone-tsan's DS lookup), enforce transfer time limits
# (upstream's tdir tests) or change the machine (deb, deps-listen: after
# the pool).
paired="zone-rpz-ixfr-fail zone-zonemd zone-fast-reload zone-reload zone-ixfr-fail zone-oom zone-apply-nomem
	zone-zonemd-off zone-zonemd-kept zone-kill zone-valgrind zone-zonemd-pending zone-zonemd-rollover
	wildcard-proof rpz-hash-proof zone-rpz-memory wildcard-hash zone-rpz-updates zone-health zone-journal zone-crash-points zone-rpz-steps zone-rpz-fail-closed zone-axfr-diff zone-alloc-sweep
	stats-passes stats-passes-dnscrypt zone-transfer zone-transfer-debug zone-lock-order control-lines
	zone-ixfr zone-roundtrip stats-interval zone-shutdown zone-reload-nomem
	zone-transfer-nothreads zone-faults zone-rpz monitoring smoke zone-reload-kind dnssec
	dnssec-lookup3 rpz-hash scrapers zone-url parse-ptrs"

# Debian's Python, where python3-dnspython is installed (a python3 earlier
# on PATH, e.g. from pyenv, may lack it).
# a fixed seed, so that a fuzz test that fails here fails again with the
# same tree; make fuzz explores with new seeds
FUZZ_SEED=${FUZZ_SEED:-1}
export FUZZ_SEED
# the i386 libraries of build/fork-32 (make fork-32)
i386_libs=$top/build/i386/root/usr/lib/i386-linux-gnu:$top/build/i386/root/lib/i386-linux-gnu
PYTHON=${PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3)}
# run NAME CMD...: one test, its output in build/test/NAME.log. Its report
# (the summary lines, the log's tail when it fails, PASS or FAIL with its
# time) is printed in one piece, as tests may run at the same time, and
# its counts go to build/test/NAME.result for the totals: "PASSED FAILED
# SECONDS EXIT".
run() {
	name=$1; shift
	start=$(date +%s)
	"$@" > "$logs/$name.log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	# A suite that counts its own tests ("...: N passed, M failed") adds
	# those counts; any other test counts as one.
	sub=$(grep -E '^[a-z ]+: [0-9]+ passed, [0-9]+ failed' "$logs/$name.log" | tail -n 1)
	np=1 nf=0
	if [ -n "$sub" ]; then
		np=$(echo "$sub" | sed 's/^[a-z ]*: \([0-9]*\) passed.*/\1/')
		nf=$(echo "$sub" | sed 's/.* \([0-9]*\) failed.*/\1/')
	fi
	{
		grep -E '^upstream( tdir)?( (PASS|FAIL|SKIP))?:' "$logs/$name.log"
		if [ $rc -eq 0 ]; then
			echo "PASS: $name (${secs}s)"
		else
			sed 's/^/    /' "$logs/$name.log" | tail -n 60
			echo "FAIL: $name (${secs}s, exit $rc, log: $logs/$name.log)"
		fi
	} > "$logs/$name.report"
	if [ $rc -ne 0 ]; then
		[ -n "$sub" ] && [ "$nf" -gt 0 ] || nf=$((nf + 1))
		[ -n "$sub" ] || np=0
	fi
	echo "$np $nf $secs $rc" > "$logs/$name.result"
	cat "$logs/$name.report"
}

# run_test NAME: the test NAME, through run().
run_test() {
	t=$1
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
	cve-warnings) run cve-warnings "$PYTHON" "$here/test_cve_warnings.py" "$bld" ;;
	parse-ptrs) run parse-ptrs "$PYTHON" "$here/test_parse_ptrs.py" "$bld" ;;
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
	zone-lock-order) run zone-lock-order sh -c 'make -s -C "$3" lock-verify >/dev/null &&
		for o in "" --nopause; do "$1" "$2/test_zone_lock_order.py" "$3" $o || exit 1; done' \
		sh "$PYTHON" "$here" "$top/build/fork-debug" ;;
	zone-transfer-nothreads) run zone-transfer-nothreads "$PYTHON" "$here/test_zone_transfer.py" \
		"$top/build/fork-nothreads" --no-thread-support ;;
	zone-transfer) run zone-transfer sh -c 'for m in yes no; do "$1" "$2/test_zone_transfer.py" "$3" --io-thread $m || exit 1; done' \
		sh "$PYTHON" "$here" "$bld" ;;
	zone-faults) run zone-faults sh -c 'for m in yes no; do "$1" "$2/test_zone_faults.py" "$3" --io-thread $m || exit 1; done' \
		sh "$PYTHON" "$here" "$bld" ;;
	zone-ixfr) run zone-ixfr sh -c 'for m in yes no; do "$1" "$2/test_zone_ixfr.py" "$3" --io-thread $m || exit 1; done &&
		"$1" "$2/test_zone_ixfr.py" "$3" --copy-nomem' \
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
	# and a zonefile write queued before an apply whose check waits, and
	# a check whose job to the I/O thread could not be allocated (tried
	# again, made and written by the thread), and the end of a lookup for
	# a zone that fast_reload +p replaced, before the workers picked that
	# up
	zone-zonemd) run zone-zonemd sh -c '"$1" "$2/test_zone_zonemd.py" "$3" --io-check &&
		"$1" "$2/test_zone_zonemd.py" "$3" --queued-write --io-thread yes &&
		"$1" "$2/test_zone_zonemd.py" "$3" --names 2000 --queue-nomem --io-thread yes &&
		"$1" "$2/test_zone_zonemd.py" "$3" --names 2000 --swap-callback --io-thread no &&
		"$1" "$2/test_zone_zonemd.py" "$3" --names 2000 --swap-callback --io-thread yes' \
		sh "$PYTHON" "$here" "$bld" ;;
	# zone-zonemd runs it with the auth-zone I/O thread, this without
	zone-zonemd-pending) run zone-zonemd-pending "$PYTHON" "$here/test_zone_zonemd.py" "$bld" \
		--io-thread no ;;
	# the I/O thread keeps the check pending over the reload; the reload
	# keeps the data, or reads another zonefile
	# a reload (SIGHUP, fast_reload) that keeps the data in memory: it
	# gets the check that the new config asks, when the trust anchor goes
	# or zonemd-check comes
	zone-zonemd-kept) run zone-zonemd-kept sh -c 'for o in "--anchor-removed-at-reload --io-thread yes" \
		"--enabled-at-reload --io-thread yes" "--enabled-at-reload --io-thread no" \
		"--enabled-at-reload --anchor-removed-at-reload --io-thread yes" \
		"--anchor-removed-at-reload --fast-reload --io-thread yes" \
		"--anchor-removed-at-reload --fast-reload --io-thread no" \
		"--enabled-at-reload --fast-reload --io-thread yes" \
		"--enabled-at-reload --anchor-removed-at-reload --fast-reload --io-thread yes" \
		"--anchor-added-at-reload --io-thread yes" "--anchor-added-at-reload --fast-reload --io-thread yes" \
		"--anchor-added-at-reload --fast-reload --io-thread no"; do
		"$1" "$2/test_zone_zonemd.py" "$3" --names 2000 $o || exit 1; done' \
		sh "$PYTHON" "$here" "$bld" ;;
	zone-zonemd-off) run zone-zonemd-off sh -c '"$1" "$2/test_zone_zonemd.py" "$3" --disable-at-reload --io-thread yes &&
		"$1" "$2/test_zone_zonemd.py" "$3" --disable-at-reload --rename-zonefile --io-thread yes' \
		sh "$PYTHON" "$here" "$bld" ;;
	# the lookup ends while the I/O thread applies serial 2
	zone-zonemd-rollover) run zone-zonemd-rollover "$PYTHON" "$here/test_zone_zonemd.py" "$bld" \
		--rollover --release-delay 0 --io-thread yes ;;
	# and the I/O thread's check of it, held, with queries meanwhile; and
	# auth_zone_reload, without a zonefile, of data whose check failed
	zone-zonemd-reload) run zone-zonemd-reload sh -c 'for m in yes no; do "$1" "$2/test_zone_zonemd_reload.py" "$3" --io-thread $m || exit 1; done &&
		"$1" "$2/test_zone_zonemd_reload.py" "$3" --io-thread yes --held-hash &&
		"$1" "$2/test_zone_zonemd.py" "$3" --names 2000 --reload-failed --io-thread yes' \
		sh "$PYTHON" "$here" "$bld" ;;
	# fast_reload with and without +p under ASan; under TSan without +p
	# only: with +p, TSan reports races in upstream's own +p code
	# (fr_atomic_copy_cfg, acl_list_swap_tree), none in the fork's.
	zone-fast-reload) run zone-fast-reload sh -c '"$1" "$2/test_zone_fast_reload.py" "$3" && "$1" "$2/test_zone_fast_reload.py" "$3" --nopause &&
		"$1" "$2/test_zone_fast_reload_first.py" "$3" && "$1" "$2/test_zone_fast_reload_first.py" "$3" --nopause &&
		"$1" "$2/test_zone_fast_reload_rpz.py" "$3" && "$1" "$2/test_zone_fast_reload_rpz.py" "$3" --nopause &&
		"$1" "$2/test_zone_fast_reload_window.py" "$3"' \
		sh "$PYTHON" "$here" "$top/build/fork-asan" ;;
	# a transfer applied while fast_reload reads the zonefiles, after
	# and before its comparison of the zones, with and without +p
	zone-fast-reload-apply) run zone-fast-reload-apply sh -c 'for o in "" --nopause --apply-first "--apply-first --nopause --zone-set" --queued-apply "--queued-apply --same-primaries" --zonemd-hash "--zonemd-hash --nopause --zone-set" "--queued-apply --drop-primary" "--queued-apply --drop-primary" "--ixfr-copy --zone-set" "--ixfr-copy --nopause" "--ixfr-copy --apply-first"; do "$1" "$2/test_zone_fast_reload_apply.py" "$3" $o || exit 1; done' \
		sh "$PYTHON" "$here" "$top/build/fork-asan" ;;
	# and the held write, apply, IXFR copy and ZONEMD hash of the apply
	# test, under TSan too
	zone-fast-reload-tsan) run zone-fast-reload-tsan env \
		TSAN_OPTIONS="second_deadlock_stack=1 suppressions=$here/tsan-stock.supp" \
		sh -c '"$1" "$2/test_zone_fast_reload.py" "$3" || exit 1
		for o in "" --apply-first "--ixfr-copy --zone-set" --zonemd-hash; do
			"$1" "$2/test_zone_fast_reload_apply.py" "$3" $o || exit 1; done' \
		sh "$PYTHON" "$here" "$top/build/fork-tsan" ;;
	zone-rpz-updates) run zone-rpz-updates sh -c 'for m in yes no; do "$1" "$2/test_zone_rpz_updates.py" "$3" --io-thread $m || exit 1; done; "$1" "$2/test_zone_rpz_updates.py" "$3" --names 2000 --replace 1100 || exit 1; "$1" "$2/test_zone_rpz_updates.py" "$3" --names 100000 --addr 10000 --replace 1000 --replace-addr 5000 --updates 20 --rss-growth 1.1 || exit 1; "$1" "$2/test_zone_rpz_updates.py" "$3" --names 20000 --addr 0 --replace 0 --replace-addr 0 --rotate 1200 --updates 40 --rss-growth 1.05' \
		sh "$PYTHON" "$here" "$bld" ;;
	zone-url) run zone-url "$PYTHON" "$here/test_zone_url.py" "$bld" ;;
	zone-rpz) run zone-rpz "$PYTHON" "$here/test_zone_rpz.py" "$bld" ;;
	zone-rpz-memory) run zone-rpz-memory "$PYTHON" "$here/test_zone_rpz_memory.py" "$bld" ;;
	zone-rpz-ixfr-fail) run zone-rpz-ixfr-fail sh -c 'for m in yes no; do "$1" "$2/test_zone_ixfr_fail.py" "$3" --io-thread $m --rpz || exit 1; done' \
		sh "$PYTHON" "$here" "$top/build/fork-asan" ;;
	patch-messages) run patch-messages "$PYTHON" "$here/test_patch_messages.py" "$top/patches" ;;
	zone-health) run zone-health sh -c 'for m in yes no; do
		"$1" "$2/test_zone_health.py" "$3" "$4" --io-thread $m || exit 1; done' \
		sh "$PYTHON" "$here" "$bld" "$top/build/src" ;;
	zone-journal) run zone-journal "$PYTHON" "$here/test_zone_journal.py" "$top/build/fork-asan" ;;
	zone-crash-points) run zone-crash-points "$PYTHON" "$here/test_zone_crash_points.py" "$bld" ;;
	zone-alloc-sweep) run zone-alloc-sweep sh "$here/alloc_sweeps.sh" "$top/build/fork-asan" ;;
	zone-rpz-steps) run zone-rpz-steps "$PYTHON" "$here/test_zone_rpz_steps.py" "$top/build/fork-asan" ;;
	zone-rpz-fail-closed) run zone-rpz-fail-closed "$PYTHON" "$here/test_zone_rpz_fail_closed.py" "$top/build/fork-asan" ;;
	zone-axfr-diff) run zone-axfr-diff "$PYTHON" "$here/test_zone_axfr_diff.py" "$top/build/fork-asan" ;;
	zone-notify) run zone-notify "$PYTHON" "$here/test_zone_notify.py" "$bld" ;;
	zone-valgrind) run zone-valgrind "$PYTHON" "$here/test_zone_shutdown.py" "$bld" --valgrind ;;
	zone-stall) run zone-stall "$PYTHON" "$here/test_zone_stall.py" "$bld" ;;
	zone-stall-proof) run zone-stall-proof "$PYTHON" "$here/test_zone_stall.py" "$bld" \
		--io-thread no --expect-stall --updates 1 ;;
	zone-tsan) run zone-tsan "$here/test_zone_tsan.sh" "$top/build/fork-tsan" ;;
	zone-oom) run zone-oom "$PYTHON" "$here/test_zone_oom.py" "$top/build/fork-asan" ;;
	zone-apply-nomem) run zone-apply-nomem sh -c 'for m in "--primary nsd --zonemd" \
		"--primary knot --zonemd" "--primary http" --malformed; do
		"$1" "$2/test_zone_apply_nomem.py" "$3" $m || exit 1; done' \
		sh "$PYTHON" "$here" "$top/build/fork-asan" ;;
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
	# the prefixes not recorded as passed (make check-series records
	# them); the last one's tree is build/fork's, which the other tests check
	check-series) run check-series "$top/scripts/check-series.sh" --last 3 \
		--record "$here/check-series.passed" "$top/build/base" "$top/patches" "$top/build/check-series" ;;
	deb) run deb sh -c 'make -C "$1" deb && "$2/test_deb.sh" "$1/build/deb"' sh "$top" "$here" ;;
	deb-upgrade) run deb-upgrade sh -c 'make -C "$1" deb && "$2/test_deb.sh" "$1/build/deb" --upgrade' \
		sh "$top" "$here" ;;
	*) echo "run-tests: unknown test $t" >&2; return 2 ;;
	esac
}

# prep NAME: a build that tests run after the pool need, made in the pool
# beside the other tests, whose waits leave CPU time for it: make deb
# (deb, deb-upgrade). Listed with the builds in the closing report; when
# it fails, the test's own make deb fails again and says why.
prep() {
	case $1 in
	deb)
		s=$(date +%s)
		make -C "$top" deb > "$logs/prep-deb.log" 2>&1 || true
		echo "$(( $(date +%s) - s )) build deb (make deb, beside the tests; log: $logs/prep-deb.log)" > "$logs/.prep-deb" ;;
	esac
}

# pool N CHAIN...: run the chains, N at a time; a chain is test names
# joined by "+", run one after the other (tests that share what they
# write, such as a build directory's cmocka-address/). Tokens in a FIFO
# bound the number running: a job takes one before it starts and gives
# it back when it ends.
pool() {
	n=$1; shift
	pool_id=$((pool_id + 1))
	fifo=$logs/.pool.$$.$pool_id
	rm -f "$fifo"
	mkfifo "$fifo" || exit 2
	exec 3<>"$fifo"
	rm -f "$fifo"
	i=0
	while [ $i -lt "$n" ]; do echo >&3; i=$((i + 1)); done
	for chain; do
		read -r _ <&3
		(
			case $chain in
			@*) prep "${chain#@}" ;;
			# the tests, and daemons they leave, do not get the FIFO
			*) for t in $(echo "$chain" | tr + ' '); do run_test "$t" 3>&-; done ;;
			esac
			echo >&3
		) &
	done
	wait
	exec 3>&-
}

case ${TEST_JOBS:-1} in
""|*[!0-9]*|0) echo "run-tests: TEST_JOBS must be a positive number" >&2; exit 2 ;;
esac
# Every test name must be known before any runs.
all=""
for c; do all="$all $(echo "$c" | tr + ' ')"; done
for t in $all; do
	grep -q "^	$t) " "$0" || { echo "run-tests: unknown test $t" >&2; echo "$usage" >&2; exit 2; }
	rm -f "$logs/$t.result" "$logs/$t.report"
done
rm -f "$logs/.prep-deb" "$logs/.prepare"
start_all=$(date +%s)
pool_id=0
if [ "$default" = 1 ]; then
	# the tests of $pooled TEST_JOBS at a time (default 3 on the 2
	# CPUs, as make deb is built among them) and, beside them, those of
	# $paired two at a time, then every other test alone
	together="" two="" solo=""
	for c; do
		case " $(echo $pooled) " in *" $c "*) together="$together $c"; continue ;; esac
		case " $(echo $paired) " in *" $c "*) two="$two $c" ;; *) solo="$solo $c" ;; esac
	done
	case " $solo " in *" deb "*|*" deb-upgrade "*) together="@deb $together" ;; esac
	# make tests once in each build directory whose tests run make there,
	# so that tests running at the same time find it up to date; through
	# ccache, as the builds were (build.sh), so that CI's clean clone
	# takes the test programs from the cache
	t0=$(date +%s)
	for b in fork stock fork-lookup3 fork-tsan fork-asan fork-debug fork-nothreads fork-32; do
		[ ! -f "$top/build/$b/Makefile" ] || (. "$top/scripts/ccache.sh" && ccache_use "$top" &&
			make -C "$top/build/$b" -s -j"$(nproc)" tests) > "$logs/prepare-$b.log" 2>&1 ||
			{ tail -n 20 "$logs/prepare-$b.log"; echo "run-tests: make tests failed in build/$b"; exit 1; }
	done
	echo "$(( $(date +%s) - t0 ))" > "$logs/.prepare"
	# The pool's tests (CPU work, no daemon) run under SCHED_IDLE, at the
	# same time as the daemon tests: they get only the CPU time the
	# daemon tests leave (those keep under one CPU busy, doc/ci-time.md),
	# and a daemon test's process that wakes preempts them at once, so
	# the daemon tests wait on transfers and timers as on an idle machine.
	# shellcheck disable=SC2086
	(
		# this subshell's PID: chrt's policy is inherited by what it forks
		chrt --idle -p 0 "$(sh -c 'echo $PPID')" > /dev/null ||
			echo "run-tests: chrt --idle failed; the pool runs at normal priority"
		pool_id=1
		pool "${TEST_JOBS:-3}" $together
	) &
	pooljob=$!
	# shellcheck disable=SC2086
	pool 2 $two
	# then the others one at a time, still beside the pool; those that
	# install packages wait for it, as it builds make deb
	later=""
	for t in $solo; do
		case $t in
		deb|deb-upgrade|deps-listen|deps-listen-proof) later="$later $t" ;;
		*) run_test "$t" ;;
		esac
	done
	wait "$pooljob"
	for t in $later; do run_test "$t"; done
else
	pool "${TEST_JOBS:-1}" "$@"
fi
end_all=$(date +%s)

passed=0 failed=0 failed_names=""
for t in $all; do
	if [ -f "$logs/$t.result" ]; then
		read -r np nf secs rc < "$logs/$t.result"
	else
		# the test's job ended without writing its result
		np=0 nf=1 secs=0 rc=none
		echo "FAIL: $t (no result: its job died; log: $logs/$t.log)"
	fi
	passed=$((passed + np))
	failed=$((failed + nf))
	[ "$rc" = 0 ] || failed_names="$failed_names $t"
	echo "$secs test $t"
done > "$logs/.times"

# Where the time went: each build of this make test (scripts/build.sh
# appends to $STEADY_TIMES) and each test, longest first, and the total
# from make test's start (STEADY_TEST_START, which the Makefile sets).
first=${STEADY_TEST_START:-$start_all}
builds=0
if [ -n "$times_file" ] && [ -f "$times_file" ]; then
	while read -r b bs be bc bm; do
		[ "$bs" -ge "$first" ] && [ "$be" -le "$start_all" ] || continue
		echo "$((be - bs)) build $(basename "$b") (configure ${bc}s, make ${bm}s)" >> "$logs/.times"
		builds=$((builds + be - bs))
	done < "$times_file"
fi
[ ! -f "$logs/.prep-deb" ] || { cat "$logs/.prep-deb" >> "$logs/.times"; rm -f "$logs/.prep-deb"; }
[ ! -f "$logs/.prepare" ] || echo "$(cat "$logs/.prepare") prepare (make tests in the build directories)" >> "$logs/.times"
total=$((end_all - first))
echo "time, longest first (seconds):"
sort -rn "$logs/.times" | sed 's/^/  /'
if [ "$default" = 1 ]; then
	echo "  $((end_all - start_all)) all tests (the pooled ones ${TEST_JOBS:-3} at a time under SCHED_IDLE beside the daemon tests: two at a time, then one at a time)"
else
	echo "  $((end_all - start_all)) all tests (${TEST_JOBS:-1} at a time)"
fi
[ "$first" = "$start_all" ] || echo "  $((start_all - first)) before the tests: packages, base, work tree, the builds above ($builds s together; make test runs two at a time) and the fuzz targets"
[ -z "$failed_names" ] || echo "failed:$failed_names"
# The budget, its rule and the measured runs: doc/ci-time.md.
budget=1800
echo "make test: $total s of the $budget s budget ($((total * 100 / budget))%; doc/ci-time.md)"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
