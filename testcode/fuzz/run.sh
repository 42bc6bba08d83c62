#!/bin/sh
# Run one libFuzzer target of Unbound Steady for a bounded time: first
# every seed of its committed corpus (regression inputs included), then
# new inputs. The committed corpus is only read; new inputs go to a
# scratch corpus under build/test/. Exits nonzero on a crash, a sanitizer
# report, a leak, a timeout or a divergence, and prints the input.
usage="usage: run.sh FUZZBUILDDIR TARGET [SECONDS]
  TARGET: lruhash_model zonefile_roundtrip zonefile_read; SECONDS
  default 60. The target is built first (testcode/fuzz/build.sh) when
  it is missing or older than its sources.
  FUZZ_SEED (environment): libFuzzer's seed, so that a run can be
  repeated (make test sets 1); unset, a new random seed each run."

set -eu
[ $# -ge 2 ] && [ $# -le 3 ] || { echo "$usage" >&2; exit 2; }
bld=$(cd "$1" && pwd)
t=$2
secs=${3:-60}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
prog=$bld/fuzz/$t
case $t in
lruhash_model) srcs="$top/testcode/cmocka/lruhash_model.c" ;;
zonefile_roundtrip|zonefile_read) srcs="$here/$t.c" ;;
*) echo "$usage" >&2; exit 2 ;;
esac
stale=0
[ -x "$prog" ] || stale=1
for s in $srcs "$here/build.sh"; do
	[ "$stale" = 1 ] || [ ! "$s" -nt "$prog" ] || stale=1
done
[ "$stale" = 0 ] || "$here/build.sh" "$bld" "$t"

seeds=$here/corpus/$t
work=$top/build/test/fuzz-$t
rm -rf "$work"
mkdir -p "$work/corpus" "$work/tmp"
# the zonefile targets write their files in TMPDIR
export TMPDIR="$work/tmp"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
# upstream UB that is written up (doc/fuzzing.md) is suppressed
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$here/ubsan.supp"
seedopt=
[ -z "${FUZZ_SEED:-}" ] || seedopt=-seed=$FUZZ_SEED
echo "fuzz $t: $(ls "$seeds" | wc -l) seeds, then $secs s of new inputs${seedopt:+ ($seedopt)}"
rc=0
# each seed whole (the fuzzing below cuts inputs at -max_len)
"$prog" -timeout=60 -rss_limit_mb=2560 -artifact_prefix="$work/" \
	"$seeds"/* > "$work/seeds.log" 2>&1 || {
	cat "$work/seeds.log" | grep -v '^    #[1-9][0-9]' | tail -n 60
	for a in "$work"/crash-* "$work"/leak-* "$work"/timeout-*; do
		[ -f "$a" ] && echo "fuzz $t: failing seed (base64: $(base64 -w0 < "$a"))"
	done
	echo "fuzz $t: a seed FAILED, log $work/seeds.log"
	exit 1
}
"$prog" $seedopt -max_total_time="$secs" -timeout=30 -rss_limit_mb=2560 \
	-max_len=4096 -len_control=0 -print_final_stats=1 \
	-artifact_prefix="$work/" "$work/corpus" "$seeds" \
	> "$work/fuzz.log" 2>&1 || rc=$?
grep -E '^(INFO: Seed|zonefile|lruhash|step|stat::number_of_executed_units|Done|#[0-9]+.*DONE)' "$work/fuzz.log" | tail -n 20
if [ $rc -ne 0 ]; then
	grep -E -A30 'ERROR: |runtime error|divergence|round trip:' "$work/fuzz.log" |
		grep -v '^    #[1-9][0-9]' | head -n 60
	for a in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
		[ -f "$a" ] || continue
		echo "fuzz $t: failing input $a (base64: $(base64 -w0 < "$a"))"
	done
	echo "fuzz $t: FAILED (exit $rc), log $work/fuzz.log"
	exit 1
fi
echo "fuzz $t: no failure in $secs s, $(ls "$work/corpus" | wc -l) new inputs"
