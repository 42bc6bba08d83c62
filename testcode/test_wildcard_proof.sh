#!/bin/sh
# Proof that the wildcard-CNAME regression test can fail: against a build
# with the az_change_dnames hash fix reverted, (a) with the guard off the
# test fails on rrset.cache.max_collisions; (b) with the guard on it passes
# on max_collisions while rrset.cache.hash_repairs rises.
usage="usage: test_wildcard_proof.sh HASHBUG_BUILDDIR [NAMES]"

set -u
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python3}
# Enough names for a chain far above the limit; with the bug each insert
# scans the whole chain, so more would only make the run slower.
names=${2:-20000}
fails=0

out=$("$py" "$here/test_wildcard_hash.py" "$1" --names "$names" --guard no 2>&1)
rc=$?
echo "(a) bug reintroduced, guard off:"; echo "$out" | sed 's/^/    /'
if [ $rc -ne 0 ] && echo "$out" | grep -q "FAIL: rrset.cache.max_collisions="; then
	echo "  ok: the regression test fails on max_collisions"
else
	echo "  FAIL: the regression test did not fail on max_collisions"; fails=$((fails + 1))
fi

out=$("$py" "$here/test_wildcard_hash.py" "$1" --names "$names" --guard yes --expect-repairs 2>&1)
rc=$?
echo "(b) bug reintroduced, guard on:"; echo "$out" | sed 's/^/    /'
if [ $rc -eq 0 ] && ! echo "$out" | grep -q "max_collisions=.*>"; then
	echo "  ok: max_collisions stays small and hash repairs are counted and logged"
else
	echo "  FAIL: the guard did not keep the chain short or count the repairs"; fails=$((fails + 1))
fi
[ $fails -eq 0 ] && { echo "test_wildcard_proof: ok"; exit 0; }
exit 1
