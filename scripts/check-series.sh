#!/bin/sh
# Check that the series bisects: for every prefix 1..k of PATCHDIR/series,
# apply it to the base, build, and run upstream's make test plus the tdir
# tests the prefix's patches add or change. Stops at, and names, the first
# patch that breaks.
usage="usage: check-series.sh [--force] [--last K] [--record FILE] BASEDIR PATCHDIR WORKDIR
  --last K   check only the last K prefixes (default: all)
  --force    check again prefixes that passed before (a prefix whose patches,
             base.pin, flags and check scripts are unchanged since it
             passed is not rebuilt, only reported)
  --record FILE  the prefixes that passed, kept in the tree
             (testcode/check-series.passed): a prefix whose patches are
             recorded there is not checked again (make test checks the
             whole series' tree anyway: build/fork, upstream-unit and
             upstream-tdir); each prefix that passes is added, and
             the file is rewritten with the current series' prefixes only
  WORKDIR gets a copy of the series (patches/ may change meanwhile), the
  tree and build of the prefix being checked (src/, obj/: left as they are
  when it fails), one log per prefix (logs/) and the results
  of every run (results: KEY ok|FAIL K PATCH ..., KEY = sha256 of the
  prefix's patch files, read by make upstream).
  environment: CONFIGURE_FLAGS (appended after --disable-flto), JOBS, CC"

set -eu
last=0 force=0 record=""
while [ $# -gt 0 ]; do
	case $1 in
	--last) [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }; last=$2; shift 2 ;;
	--record) [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }; record=$2; shift 2 ;;
	--force) force=1; shift ;;
	*) break ;;
	esac
done
case $last in *[!0-9]*|"") echo "$usage" >&2; exit 2 ;; esac
[ $# -eq 3 ] || { echo "$usage" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
base=$(cd "$1" && pwd) pdir=$(cd "$2" && pwd)
mkdir -p "$3"
work=$(cd "$3" && pwd)
die() { echo "check-series: error: $*" >&2; exit 1; }

rm -rf "$work/patches"
mkdir -p "$work/patches" "$work/logs"
"$here/series.sh" "$pdir" > "$work/patches/series"
while read -r p; do
	cp "$pdir/$p" "$work/patches/$p"
done < "$work/patches/series"
n=$(grep -c . "$work/patches/series" || true)
[ "$n" -gt 0 ] || { echo "check-series: the series is empty; nothing to check"; exit 0; }
first=1
[ "$last" -eq 0 ] || [ "$last" -ge "$n" ] || first=$((n - last + 1))

# Repeated builds of nearly the same tree: through build.sh's ccache (the
# machine's cache, so that another clone's check of the same prefixes
# hits it too; paths relative to WORKDIR, the same for every prefix) and
# without LTO, whose link step is not cached.
export CONFIGURE_FLAGS="--disable-flto ${CONFIGURE_FLAGS:-}"
export CCACHE_BASEDIR=$work
command -v ccache >/dev/null ||
	echo "check-series: ccache not found (scripts/install-deps.sh installs it); builds are slower"
# configure's results are cached per configure script (a patch that
# changes configure gets a fresh run); caches of earlier runs are dropped,
# as the machine's packages may have changed since.
rm -f "$work"/config.cache.*
flags=$CONFIGURE_FLAGS
# What a pass depends on besides the patches: the base, the flags and the
# scripts that build and test.
basefails=$top/testcode/upstream-tdir-base-failures
setup=$({ cat "$top/base.pin" "$here/build.sh" "$here/check-series.sh" "$top/testcode/upstream-unit.sh" \
	"$top/testcode/upstream-tdir.sh" "$basefails"; echo "$flags"; } | sha256sum | cut -c1-16)
touch "$work/results"

# prefix_key K: sha256 of patches 1..K, concatenated.
prefix_key() {
	head -n "$1" "$work/patches/series" | (cd "$work/patches" && xargs cat) | sha256sum | cut -d' ' -f1
}

echo "check-series: prefixes $first..$n of $n (logs: $work/logs/)"
k=0
# A for loop, not "while read": the builds and tests must not read stdin.
for p in $(cat "$work/patches/series"); do
	k=$((k + 1))
	[ $k -ge $first ] || continue
	log=$work/logs/$(printf %02d $k)-${p%.patch}.log
	rm -f "$log"
	key=$(prefix_key $k)
	if [ $force = 0 ] && [ -n "$record" ] && grep -q "^$key " "$record" 2>/dev/null; then
		echo "check-series: ok $k/$n $p (recorded: $(grep "^$key " "$record" | head -n 1 | cut -d' ' -f4-))"
		continue
	fi
	prev=$(grep "^$key .* setup=$setup " "$work/results" | tail -n 1)
	if [ $force = 0 ] && [ "$(echo "$prev" | cut -d' ' -f2)" = ok ]; then
		echo "check-series: ok $k/$n $p (passed before, $(echo "$prev" | awk '{ print $NF }'); --force/FORCE=1 checks again)"
		continue
	fi
	# broken WHAT: report the first breaking patch and stop.
	broken() {
		echo "$key FAIL $k $p setup=$setup $(date -u +%Y-%m-%dT%H:%MZ) $1" >> "$work/results"
		echo "check-series: FAIL $k/$n $p: $1 (log: $log)"
		echo "check-series: first breaking patch: $p (prefix 1..$k)"
		exit 1
	}
	# Apply without fuzz, as dpkg-source (make deb) and git am (make src) do.
	rm -rf "$work/src" "$work/obj"
	cp -a "$base" "$work/src"
	rm -f "$work/src/.stamp"
	head -n $k "$work/patches/series" | while read -r q; do
		echo "== apply $q" >> "$log"
		patch -d "$work/src" -p1 -F0 -N --no-backup-if-mismatch --reject-file=- \
			-i "$work/patches/$q" >> "$log" 2>&1 || { echo "$q" > "$work/bad"; exit 1; }
	done || broken "$(cat "$work/bad") does not apply without fuzz"
	t1=$(date +%s)
	cache=$work/config.cache.$(sha256sum < "$work/src/configure" | cut -c1-16)
	# Unbound's configure restores CFLAGS after its "nonstring"
	# attribute check only when it runs the check, not when the result
	# comes from the cache: a cached run would build with -Werror -Wall
	# (and upstream's dnstap/unbound-dnstap-socket.c does not build so).
	# So that check always runs.
	[ ! -f "$cache" ] || sed -i '/^ac_cv_c_nonstring_attribute=/d' "$cache"
	CONFIGURE_FLAGS="$flags --cache-file=$cache"
	echo "== build (CONFIGURE_FLAGS=$CONFIGURE_FLAGS CC=${CC:-cc})" >> "$log"
	# No STEADY_PATCHLEVEL: a -D that differs per prefix would defeat
	# ccache's direct mode for every file (unbound -V says "unknown").
	"$here/build.sh" "$work/src" "$work/obj" >> "$log" 2>&1 ||
		broken "build failed: $(grep -h -m 1 ': error: ' "$work/obj/make.log" "$work/obj/configure.log" 2>/dev/null | head -n 1)"
	t2=$(date +%s)
	echo "== upstream make test" >> "$log"
	"$top/testcode/upstream-unit.sh" "$work/obj" >> "$log" 2>&1 ||
		broken "upstream make test failed ($(grep '^upstream FAIL' "$log" | head -n 3 | sed 's/^upstream FAIL: //' | tr '\n' ' '))"
	unit=$(sed -n 's/^upstream: \([0-9]*\) passed.*/\1/p' "$log" | tail -n 1)
	# tdir tests are not part of make test: run those the prefix's
	# patches add or change (testdata/NAME.tdir/...).
	tdirs=$(head -n $k "$work/patches/series" | while read -r q; do
		sed -n 's|^diff --git a/testdata/\([^/]*\.tdir\)/.*|\1|p' "$work/patches/$q"
	done | sort -u | tr '\n' ' ')
	tdirs=${tdirs% }
	tdirmsg=""
	# those that fail on the base itself are not run (said in the log
	# and the result line; test tdir-base-failures keeps the list true)
	for t in $tdirs; do
		if grep -q "^${t%.tdir}	" "$basefails"; then
			echo "== upstream tdir NOT RUN: $t (fails on the base too: $basefails)" >> "$log"
			tdirs=$(echo " $tdirs " | sed "s| $t | |; s|^ ||; s| \$||")
			tdirmsg="$tdirmsg, tdir ${t%.tdir} not run (fails on the base)"
		fi
	done
	if [ -n "$tdirs" ]; then
		echo "== upstream tdir tests: $tdirs" >> "$log"
		# shellcheck disable=SC2086
		"$top/testcode/upstream-tdir.sh" "$work/obj" $tdirs >> "$log" 2>&1 ||
			broken "tdir test failed: $(grep '^upstream tdir FAIL' "$log" | sed 's/^upstream tdir FAIL: //' | tr '\n' ' ')"
		tdirmsg=", tdir $tdirs$tdirmsg"
	fi
	t3=$(date +%s)
	# Kept across runs for make upstream's cover letters, keyed by the
	# sha256 of the prefix's patch files (the same series, the same key).
	echo "$key ok $k $p make-test=$unit tdir=$(echo "${tdirs:-none}" | tr ' ' ,) setup=$setup $(date -u +%Y-%m-%dT%H:%MZ)" >> "$work/results"
	[ -z "$record" ] || grep -q "^$key " "$record" 2>/dev/null ||
		echo "$key $k $p passed $(date -u +%Y-%m-%d), make test $unit" >> "$record"
	echo "check-series: ok $k/$n $p (build $((t2 - t1))s, make test $unit passed $((t3 - t2))s$tdirmsg)"
done </dev/null
rm -rf "$work/src" "$work/obj" "$work/bad"
# The record keeps the prefixes of this series only, in order.
if [ -n "$record" ] && [ -f "$record" ]; then
	k=0
	for p in $(cat "$work/patches/series"); do
		k=$((k + 1))
		grep -m 1 "^$(prefix_key $k) " "$record" || true
	done > "$record.tmp"
	{ sed -n '/^#/p' "$record"; cat "$record.tmp"; } > "$record.new"
	rm -f "$record.tmp"
	mv "$record.new" "$record"
fi
echo "check-series: prefixes $first..$n of $n build and pass"
