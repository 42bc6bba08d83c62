#!/bin/sh
# doc/security-status.md is current: it names the pinned base, its table
# of unfixed CVEs has BASE_UNFIXED_CVES rows (what unbound -V prints),
# BASE_MITIGATED_CVES of them marked mitigated, its unbound -V sample
# says both,
# every CVE id that the base's debian/changelog names in its entries newer
# than the fork's previous base (BASE_PREVIOUS_VERSION) is in the file
# (Debian's changelog can be the only list: upstream's 1.26.1 tarball
# names none of its CVEs), and, when upstream's repository is here, every
# CVE id of upstream's doc/Changelog that the base does not name is in the
# file.
usage="usage: test_security_status.sh BASEDIR
  BASEDIR is build/base. UPSTREAM_GIT (default
  /work/.mirror/NLnetLabs+unbound/repo) is a git copy of upstream's
  repository; without it the comparison with upstream is skipped (said)."

set -u
[ $# -eq 1 ] || { echo "$usage" >&2; exit 2; }
base=$(cd "$1" && pwd) || exit 2
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/pin.sh"
pin_load "$top/base.pin" || exit 2
doc=${SECURITY_DOC:-$top/doc/security-status.md}
up=${UPSTREAM_GIT:-/work/.mirror/NLnetLabs+unbound/repo}
fails=0
ok() { echo "  ok: $*"; }
bad() { echo "  FAIL: $*"; fails=$((fails + 1)); }
# in_doc IDS: n, the number of CVE ids in IDS, and absent, those that
# $doc does not name
in_doc() {
	n=0 absent=""
	for c in $1; do
		n=$((n + 1))
		grep -q "$c" "$doc" || absent="$absent $c"
	done
}

grep -qF "$BASE_DEBIAN_VERSION" "$doc" && ok "names the base $BASE_DEBIAN_VERSION" ||
	bad "$doc does not name the pinned base $BASE_DEBIAN_VERSION"
rows=$(sed -n '/^## Known unfixed/,/^## /p' "$doc" | grep -c '^| CVE-')
[ "$rows" -eq "$BASE_UNFIXED_CVES" ] && ok "$rows unfixed CVEs listed, as base.pin says" ||
	bad "the table lists $rows CVEs, base.pin's BASE_UNFIXED_CVES is $BASE_UNFIXED_CVES"
mitigated=$(sed -n '/^## Known unfixed/,/^## /p' "$doc" | grep '^| CVE-' | grep -c '| mitigated[:;]')
[ "$mitigated" -eq "$BASE_MITIGATED_CVES" ] && ok "$mitigated of them mitigated, as base.pin says" ||
	bad "the table marks $mitigated CVEs mitigated, base.pin's BASE_MITIGATED_CVES is $BASE_MITIGATED_CVES"
grep -q "known upstream CVEs not fixed: $BASE_UNFIXED_CVES ($BASE_OPEN_CVES open, $BASE_MITIGATED_CVES mitigated by the fork; " "$doc" &&
	ok "the unbound -V sample says $BASE_UNFIXED_CVES ($BASE_OPEN_CVES open, $BASE_MITIGATED_CVES mitigated)" ||
	bad "the unbound -V sample in $doc does not say $BASE_UNFIXED_CVES ($BASE_OPEN_CVES open, $BASE_MITIGATED_CVES mitigated)"

if [ -n "${BASE_PREVIOUS_VERSION:-}" ]; then
	# the entries of debian/changelog, newest first, down to the
	# previous base's version; the CVE ids they name
	since=$(awk '/^[a-z0-9][a-z0-9.+-]* \(/ { v = $2; gsub(/[()]/, "", v); print "V " v; next }
		{ while (match($0, /CVE-[0-9]+-[0-9]+/)) { print "C " substr($0, RSTART, RLENGTH); $0 = substr($0, RSTART + RLENGTH) } }' \
		"$base/debian/changelog" | while read -r kind val; do
			if [ "$kind" = V ]; then
				dpkg --compare-versions "$val" gt "$BASE_PREVIOUS_VERSION" || break
			else
				echo "$val"
			fi
		done | sort -u)
	in_doc "$since"
	[ -z "$absent" ] && ok "all $n CVEs of debian/changelog since $BASE_PREVIOUS_VERSION are in the file" ||
		bad "CVEs that debian/changelog names since $BASE_PREVIOUS_VERSION missing from $doc:$absent"
else
	bad "base.pin does not set BASE_PREVIOUS_VERSION"
fi

if git -C "$up" rev-parse -q --verify master >/dev/null 2>&1; then
	{ grep -o 'CVE-[0-9]*-[0-9]*' "$base/debian/changelog" "$base/doc/Changelog"
	  grep -rho 'CVE-[0-9]*-[0-9]*' "$base/debian/patches"; } | sed 's/.*://' | sort -u > "${TMPDIR:-/tmp}/secstat.$$"
	missing=$(git -C "$up" show master:doc/Changelog | grep -o 'CVE-[0-9]*-[0-9]*' | sort -u |
		comm -23 - "${TMPDIR:-/tmp}/secstat.$$")
	rm -f "${TMPDIR:-/tmp}/secstat.$$"
	in_doc "$missing"
	[ -z "$absent" ] && ok "all $n upstream CVEs that the base does not name are accounted for" ||
		bad "upstream CVEs missing from $doc:$absent"
else
	echo "  SKIP: no upstream repository at $up (UPSTREAM_GIT): not compared with upstream's Changelog"
fi
[ $fails -eq 0 ] && { echo "test_security_status: ok"; exit 0; }
echo "test_security_status: $fails check(s) failed"; exit 1
