#!/bin/sh
# Run upstream's own test suite (make test: unittest, testbound -s and every
# testdata/*.rpl replay) in a configured build directory.
usage="usage: upstream-unit.sh BUILDDIR"

set -u
[ $# -eq 1 ] || { echo "$usage" >&2; exit 2; }
cd "$1" || exit 2
log=upstream-test.log
# unittest checks the case folding of names in single byte locales and
# skips that when none is installed: make them (locales package, root).
for loc in de_DE.ISO-8859-1 tr_TR.ISO-8859-9; do
	locale -a 2>/dev/null | grep -qix "$(echo "$loc" | sed 's/ISO-/iso/; s/-//')" ||
		localedef -i "${loc%%.*}" -f "${loc#*.}" "$loc" 2>/dev/null || true
done
# A test program that never exits (as unittest and testbound did under
# ThreadSanitizer, which blocks signals in its own thread) must fail the
# test, not hang it: timeout kills make's whole process group.
limit=${UPSTREAM_TEST_LIMIT:-1800}
timeout -s KILL "$limit" make test > "$log" 2>&1
rc=$?
[ $rc -eq 137 ] && echo "upstream-unit: make test did not end in $limit s" >> "$log"
if [ $rc -eq 0 ] && grep -q 'cache hash locale test: skipped' "$log"; then
	echo "upstream-unit: no Latin-1 or Latin-5 locale: the cache hash locale test did not run"
	rc=1
fi
# make test prints "<file> OK" per replay test and stops at the first failure.
passed=$(grep -c ' OK$' "$log")
grep -q '^[0-9]* checks ok\.$' "$log" && passed=$((passed + 1))	# unittest
grep -q '^selftest successful' "$log" && passed=$((passed + 1))	# testbound -s
failed=0
if [ $rc -ne 0 ]; then
	failed=1
	tail -n 40 "$log"
	grep ' failed$' "$log" | sed 's/^/upstream FAIL: /'
fi
echo "upstream: $passed passed, $failed failed (log: $1/$log)"
exit $rc
