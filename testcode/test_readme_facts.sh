#!/bin/sh
# The README's countable statements match the tree: the security
# summary's count and the links of "Why this fork, in numbers"; and those
# of the documents it points to: the unbound -V sample of doc/building.md
# (patch level = patches in the series, base and unfixed CVEs =
# base.pin), and in doc/testing.md the number of replay tests and one
# table row per test of run-tests.sh.
usage="usage: test_readme_facts.sh SRCDIR
  SRCDIR is the patched tree (build/src), read only."

set -u
[ $# -eq 1 ] || { echo "$usage" >&2; exit 2; }
src=$(cd "$1" && pwd) || exit 2
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/pin.sh"
pin_load "$top/base.pin" || exit 2
readme=${README:-$top/README.md}
building=$top/doc/building.md
testing=$top/doc/testing.md
fails=0
ok() { echo "  ok: $*"; }
bad() { echo "  FAIL: $*"; fails=$((fails + 1)); }

n=$("$top/scripts/series.sh" "$top/patches" | wc -l)
sample=$(grep '^Unbound Steady patch level [0-9]' "$building" | head -n 1)
want="Unbound Steady patch level $n, on Debian's unbound $BASE_DEBIAN_VERSION with its security patches; known upstream CVEs not fixed: $BASE_UNFIXED_CVES ($BASE_OPEN_CVES open, $BASE_MITIGATED_CVES mitigated by the fork; "
case $sample in
"$want"*) ok "the unbound -V sample: patch level $n, base $BASE_DEBIAN_VERSION, $BASE_UNFIXED_CVES unfixed CVEs ($BASE_OPEN_CVES open, $BASE_MITIGATED_CVES mitigated)" ;;
*) bad "the unbound -V sample of doc/building.md is '$sample', want '$want...'" ;;
esac

# the summary's sentence may be folded at any blank
summary=$(tr '\n' ' ' < "$readme" | grep -o 'Security status: [^*]*' | head -n 1)
[ "$summary" = "Security status: $BASE_UNFIXED_CVES known upstream CVEs are not fixed: $BASE_OPEN_CVES open, $BASE_MITIGATED_CVES mitigated by the fork." ] &&
	ok "the security summary says $BASE_UNFIXED_CVES, $BASE_OPEN_CVES open, $BASE_MITIGATED_CVES mitigated" ||
	bad "the security summary says '$summary', not $BASE_UNFIXED_CVES, $BASE_OPEN_CVES open, $BASE_MITIGATED_CVES mitigated (base.pin)"

rpl=$(ls "$src"/testdata/*.rpl | wc -l)
grep -q "all $rpl \`testdata/\*.rpl\` replay tests" "$testing" && ok "$rpl replay tests, as the tree has" ||
	bad "doc/testing.md does not say 'all $rpl \`testdata/*.rpl\` replay tests' ($src has $rpl)"

links=$(sed -n '/^## Why this fork, in numbers/,/^## /p' "$readme" | grep -o '](doc/[^)#]*' | sed 's/^](//' | sort -u)
[ -n "$links" ] || bad "no doc/ links in 'Why this fork, in numbers'"
for l in $links; do
	[ -f "$top/$l" ] && grep -q '^Command\|Commands\?:' "$top/$l" && ok "$l exists and has its command" ||
		bad "$l is missing or names no command"
done

# Every test that run-tests.sh runs by default has a row in the table
# (the list joins the tests of a chain with "+").
tests=$(awk '/^\[ \$# -gt 0 \] \|\| set --/ { on = 1 } on { print; if (!/\\$/) exit }' "$top/testcode/run-tests.sh" |
	sed -e 's/.*set --//' -e 's/\\$//' | tr ' \t+' '\n\n\n' | grep -E '^[a-z0-9-]+$')
missing=""
for t in $tests; do
	grep -q "^| [^|]*\`$t\`" "$testing" || missing="$missing $t"
done
[ -z "$missing" ] && ok "every test of run-tests.sh ($(echo $tests | wc -w)) has a row in doc/testing.md's table" ||
	bad "tests without a row in doc/testing.md's table:$missing"

[ $fails -eq 0 ] && { echo "test_readme_facts: ok"; exit 0; }
echo "test_readme_facts: $fails check(s) failed"; exit 1
