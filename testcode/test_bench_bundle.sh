#!/bin/sh
# The portable benchmark bundle runs where nothing is installed: a root
# directory that holds only the bundle (and, for scripts/in-root.sh, the
# names /bin/sh and /usr/bin/env pointing at the bundle's own busybox),
# in a network namespace with only loopback. A quick run must write a
# report whose every table row has figures for stock, fork and the floor.
usage="usage: test_bench_bundle.sh BUNDLEDIR
  BUNDLEDIR: make bench-bundle's build/bench-bundle. Needs root."

set -eu
[ $# -eq 1 ] || { echo "$usage" >&2; exit 2; }
bundle=$(cd "$1" && pwd) || exit 2
top=$(cd "$(dirname "$0")/.." && pwd)
fail() { echo "test_bench_bundle: FAIL: $*"; exit 1; }
[ "$(id -u)" = 0 ] || fail "needs root (chroot)"
[ -x "$bundle/bin/busybox" ] || fail "$bundle is not a bundle (make bench-bundle)"

root=$(mktemp -d "${TMPDIR:-/tmp}/steady-bare.XXXXXX")
trap 'rm -rf "$root"' EXIT
trap 'exit 1' INT TERM
mkdir -p "$root/bin" "$root/usr/bin" "$root/proc" "$root/dev" "$root/tmp" "$root/etc"
chmod 1777 "$root/tmp"
cp -a "$bundle" "$root/bundle"
ln -s ../bundle/bin/busybox "$root/bin/sh"
ln -s ../../bundle/bin/busybox "$root/usr/bin/env"
# Nothing else: no libc, no loader at the usual path, no tools.
[ ! -e "$root/lib" ] && [ ! -e "$root/lib64" ] && [ ! -e "$root/usr/lib" ] || fail "the bare root has libraries"

echo "test_bench_bundle: a quick run in a root that holds only the bundle"
"$top/scripts/in-root.sh" --net "$root" /bundle/bin/busybox sh /bundle/run.sh --quick --threads 1 \
	--seconds 1 --keys 20000 --miss-rate 500 --out /tmp/report.md > "$root/run.log" 2>&1 ||
	{ cat "$root/run.log"; fail "run.sh failed in the bare root"; }
report=$root/tmp/report.md
[ -s "$report" ] || { cat "$root/run.log"; fail "no report"; }
# every data row: the thread count and then figures, none of them "-"
rows=$(grep -c '^| 1 |' "$report")
[ "$rows" -eq 3 ] || { cat "$report"; fail "want 3 rows for 1 thread (table, hits, misses), found $rows"; }
grep '^| 1 |' "$report" | grep -q '| - |' && { cat "$report"; fail "a row has no figure"; }
grep '^| 1 |' "$report" | grep -Eq '\| 0 \||\| 0\.0 \|' && { cat "$report"; fail "a row has a zero figure"; }
grep -q 'reader.s longest wait, us: stock [0-9]' "$report" || { cat "$report"; fail "no growth figures"; }
grep -Eq '^T = 1: [1-9][0-9]* ' "$report" || { cat "$report"; fail "no figure for the floor with batched receives"; }
echo "  ok: the report has figures for table lookups, cached answers with both floors, misses and growth"
sed -n '/^| threads/,/^$/p' "$report" | sed 's/^/    /'

# --parts: only the misses, and the report has only their section
"$top/scripts/in-root.sh" --net "$root" /bundle/bin/busybox sh /bundle/run.sh --quick --threads 1 \
	--seconds 1 --miss-rate 500 --parts misses --out /tmp/misses.md > "$root/run.log" 2>&1 ||
	{ cat "$root/run.log"; fail "run.sh --parts misses failed in the bare root"; }
report=$root/tmp/misses.md
grep -Eq '^\| 1 \| [1-9][0-9.]* ' "$report" || { cat "$report"; fail "--parts misses: no figures for the misses"; }
grep -q '^## Table\|^## Cached' "$report" && { cat "$report"; fail "--parts misses: the report has parts that did not run"; }
echo "  ok: --parts misses measures only the misses"
echo "test_bench_bundle: ok"
