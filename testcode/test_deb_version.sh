#!/bin/sh
# The package version (scripts/deb-version.sh): above Debian's base
# revision and bookworm's unbound, below Debian's next security revision
# and trixie's 1.26.2, growing with every committed change of the series
# (also one that keeps the number of patches), the same for a rebuild,
# and naming the Debian release it is built on. Checked with dpkg.
usage="usage: test_deb_version.sh"

set -u
[ $# -eq 0 ] || { echo "$usage" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/pin.sh"
pin_load "$top/base.pin" || exit 2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/steady-debver.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0
ok() { echo "  ok: $*"; }
bad() { echo "  FAIL: $*"; fails=$((fails + 1)); }
vers() { "$top/scripts/deb-version.sh" "$BASE_DEBIAN_VERSION" "$@"; }
# cmp A OP B DESCRIPTION
cmp() {
	if dpkg --compare-versions "$1" "$2" "$3"; then ok "$1 $2 $3 ($4)"; else bad "not $1 $2 $3 ($4)"; fi
}

# The base revision's next security update: the last number plus one.
next=$(echo "$BASE_DEBIAN_VERSION" | awk '{ n = $0; sub(/[0-9]+$/, "", n); m = substr($0, length(n) + 1); print n (m + 1) }')
v=$(vers)
echo "  version here: $v"
cmp "$v" gt "$BASE_DEBIAN_VERSION" "upgrades Debian's base revision"
cmp "$v" lt "$next" "Debian's next security revision replaces it"
for b in 1.17.1-2 1.17.1-2+deb12u1 1.17.1-2+deb12u9 1.17.1-2+deb12u99; do
	cmp "$v" gt "$b" "upgrades bookworm's unbound"
done
for t in 1.22.0-2+deb13u1 1.22.0-2+deb13u3; do
	cmp "$v" gt "$t" "upgrades trixie's earlier revisions"
done
cmp "$v" lt 1.26.2-0+deb13u1 "trixie's 1.26.2, with its CVE fixes, replaces it"
cmp "$v" gt "$BASE_DEBIAN_VERSION+steady19" "upgrades the earlier +steadyN scheme"
rel=$(. /etc/os-release && echo "$VERSION_ID")
case $v in
*~deb$rel) ok "names the Debian release it is built on (deb$rel)" ;;
*) bad "$v does not end in ~deb$rel" ;;
esac
# The trixie build (make deb DIST=trixie) sorts where the bookworm one does.
v13=$(STEADY_OS_RELEASE=13 vers)
cmp "$v13" gt "$BASE_DEBIAN_VERSION" "the Debian 13 build upgrades Debian's base revision"
cmp "$v13" lt "$next" "and Debian's next security revision replaces it"
cmp "$v13" lt 1.26.2-0+deb13u1 "and trixie's 1.26.2 replaces it, unless unbound-steady.pref holds that version back"
cmp "$(STEADY_OS_RELEASE=12 vers)" lt "$(STEADY_OS_RELEASE=13 vers)" \
	"a build for Debian 13 upgrades the same series built for 12"

# A repository whose series is rewritten: every committed change grows the
# version, an uncommitted one sits between, a rebuild keeps it.
r=$tmp/repo
mkdir -p "$r/patches"
git -C "$r" init -q
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@localhost GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@localhost
cp "$top/base.pin" "$r/"
printf 'one\n' > "$r/patches/0001-a.patch"
printf '0001-a.patch\n' > "$r/patches/series"
git -C "$r" add -A && git -C "$r" commit -q -m series
v1=$(vers "$r")
[ "$(vers "$r")" = "$v1" ] && ok "a rebuild of the same commit keeps $v1" || bad "a rebuild changed the version"
echo "other" > "$r/README" && git -C "$r" add -A && git -C "$r" commit -q -m "not the series"
[ "$(vers "$r")" = "$v1" ] && ok "a commit that does not touch the series keeps it" || bad "an unrelated commit changed the version"
# The same number of patches, another content: the old +steadyN gave the
# same version to both.
printf 'one, rewritten\n' > "$r/patches/0001-a.patch"
v2=$(vers "$r")
cmp "$v2" gt "$v1" "an uncommitted rewrite sorts above the committed series"
git -C "$r" commit -q -a -m rewrite
v3=$(vers "$r")
cmp "$v3" gt "$v2" "the committed rewrite sorts above the uncommitted build"
printf 'two\n' > "$r/patches/0002-b.patch" && printf '0002-b.patch\n' >> "$r/patches/series"
v4=$(vers "$r")
cmp "$v4" gt "$v3" "an untracked new patch sorts above"
git -C "$r" add -A && git -C "$r" commit -q -m "patch two"
cmp "$(vers "$r")" gt "$v4" "and so does its commit"
sed -i -e 's/^BASE_UNFIXED_CVES=.*/BASE_UNFIXED_CVES=0/' -e 's/^BASE_MITIGATED_CVES=.*/BASE_MITIGATED_CVES=0/' "$r/base.pin" && git -C "$r" commit -q -a -m pin
cmp "$(vers "$r")" gt "$v4" "a change of base.pin grows it too"

[ $fails -eq 0 ] && { echo "test_deb_version: ok"; exit 0; }
echo "test_deb_version: $fails check(s) failed"; exit 1
