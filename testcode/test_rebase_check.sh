#!/bin/sh
# make rebase-check (scripts/rebase-check.py) on made-up new bases: the
# pinned Debian source itself (every patch applies), an upstream-style
# tarball where a patch's code changed (that patch conflicts, named with
# its file and its number of conflicting hunks, the others are still
# tried; with --keep-conflicts it is kept), one that has a patch already,
# and a directory without a base.
usage="usage: test_rebase_check.sh BASEDIR DLDIR PATCHDIR
  BASEDIR build/base, DLDIR build/dl, PATCHDIR patches/ (read only); the
  first 3 patches of the series are used, to keep it short."

set -u
[ $# -eq 3 ] || { echo "$usage" >&2; exit 2; }
base=$(cd "$1" && pwd) && dl=$(cd "$2" && pwd) && pdir=$(cd "$3" && pwd) || exit 2
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/pin.sh"
pin_load "$top/base.pin" || exit 2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/steady-rebasecheck.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0
ok() { echo "  ok: $*"; }
bad() { echo "  FAIL: $*"; fails=$((fails + 1)); }
check() { "$top/scripts/rebase-check.py" "$base" "$tmp/patches" "$1" "$tmp/out" > "$tmp/log" 2>&1; }

mkdir "$tmp/patches"
"$top/scripts/series.sh" "$pdir" | head -n 3 > "$tmp/patches/series"
for p in $(cat "$tmp/patches/series"); do cp "$pdir/$p" "$tmp/patches/"; done
first=$(head -n 1 "$tmp/patches/series")
# A line that the first patch removes (changes), and its file: changed
# upstream too, it makes a real conflict.
file=$(awk '/^diff --git/ { f = $NF; sub(/^b\//, "", f) } /^-[^-]/ && length($0) > 12 { print f; exit }' "$tmp/patches/$first")
line=$(awk '/^-[^-]/ && length($0) > 12 { print substr($0, 2); exit }' "$tmp/patches/$first")

# 1. The pinned Debian source as the "new" base: all apply.
mkdir "$tmp/deb"
cp "$dl/$BASE_ORIG_FILE" "$dl/$BASE_DEBIAN_FILE" "$tmp/deb/"
if check "$tmp/deb" && grep -q "rebase-check: 3 apply, 0 with a three-way merge, 0 already in the new base, 0 conflict" "$tmp/log" &&
	[ -f "$tmp/out/REPORT" ] && [ "$(git -C "$tmp/out/src" rev-list --count newbase..rebased)" = 3 ]; then
	ok "Debian's orig + debian tarballs: all 3 apply, the tree has them"
else
	cat "$tmp/log"; bad "the pinned Debian source did not take the 3 patches cleanly"
fi

# 2. An upstream tarball that changed a line the first patch changes.
mkdir -p "$tmp/up/unbound-9.9.9" "$tmp/uptar"
(cd "$base" && tar --exclude=./debian --exclude=./.pc -cf - .) | tar -xf - -C "$tmp/up/unbound-9.9.9"
grep -qF "$line" "$tmp/up/unbound-9.9.9/$file" || bad "test setup: context line not found in $file"
L=$line awk 'index($0, ENVIRON["L"]) && !d { print "/* changed upstream */"; d = 1; next } { print }' \
	"$tmp/up/unbound-9.9.9/$file" > "$tmp/f" && mv "$tmp/f" "$tmp/up/unbound-9.9.9/$file"
! grep -qF "$line" "$tmp/up/unbound-9.9.9/$file" || bad "test setup: the line was not changed in $file"
tar -czf "$tmp/uptar/unbound-9.9.9.tar.gz" -C "$tmp/up" unbound-9.9.9
check "$tmp/uptar"; rc=$?
if [ $rc = 1 ] && grep -q "^CONFLICT  $first" "$tmp/log" && grep -A1 "^CONFLICT  $first" "$tmp/log" | grep -q "in: .*$file" &&
	[ "$(grep -c '^APPLIES\|^MERGED\|^CONFLICT' "$tmp/log")" = 3 ] && grep -q "upstream tarball unbound-9.9.9.tar.gz" "$tmp/log"; then
	ok "an upstream tarball with changed code: $first conflicts in $file, exit 1, the other 2 still tried"
else
	cat "$tmp/log"; bad "the conflict in $file was not reported (exit $rc)"
fi

# 2b. The same with --keep-conflicts: the conflict is reported with its
# hunk count, the patch is merged again with its side taken and kept, so
# that the patches after it are checked against it; the tree has all 3.
"$top/scripts/rebase-check.py" --keep-conflicts "$base" "$tmp/patches" "$tmp/uptar" "$tmp/out" > "$tmp/log" 2>&1; rc=$?
if [ $rc = 1 ] && grep -q "^CONFLICT  $first (kept, its side taken)" "$tmp/log" &&
	grep -A1 "^CONFLICT  $first" "$tmp/log" | grep -q "in: .*$file (1)" &&
	grep -q "1 conflict (1 hunks): " "$tmp/log" &&
	[ "$(git -C "$tmp/out/src" rev-list --count newbase..rebased)" = 3 ]; then
	ok "--keep-conflicts: $first conflicts in 1 hunk of $file, is kept, the tree has all 3"
else
	cat "$tmp/log"; bad "--keep-conflicts did not count and keep the conflicting patch (exit $rc)"
fi

# 3. An upstream tarball that has the first patch already (as master
# has the fork's backports): that patch is reported as in the new base,
# the others apply, exit 0. Before, the empty cherry-pick stopped the run
# (exit 2).
rm -rf "$tmp/up" "$tmp/uptar" "$tmp/out"
mkdir -p "$tmp/up/unbound-9.9.9" "$tmp/uptar"
(cd "$base" && tar --exclude=./debian --exclude=./.pc -cf - .) | tar -xf - -C "$tmp/up/unbound-9.9.9"
patch -s -d "$tmp/up/unbound-9.9.9" -p1 < "$tmp/patches/$first" || bad "test setup: $first does not apply to the base"
tar -czf "$tmp/uptar/unbound-9.9.9.tar.gz" -C "$tmp/up" unbound-9.9.9
check "$tmp/uptar"; rc=$?
if [ $rc = 0 ] && grep -q "^ALREADY   $first" "$tmp/log" &&
	grep -q "rebase-check: 2 apply, 0 with a three-way merge, 1 already in the new base, 0 conflict" "$tmp/log"; then
	ok "an upstream tarball that has $first: reported as already in it, the other 2 apply, exit 0"
else
	cat "$tmp/log"; bad "a patch already in the new base was not reported as such (exit $rc)"
fi

# 4. No base in the directory: an error that says what is expected.
mkdir "$tmp/empty"
check "$tmp/empty"; rc=$?
[ $rc = 2 ] && grep -q "expected upstream's release tarball or Debian's orig and debian tarballs" "$tmp/log" &&
	ok "a directory without a base is refused" || { cat "$tmp/log"; bad "an empty BASE_DIR was not refused (exit $rc)"; }

[ $fails -eq 0 ] && { echo "test_rebase_check: ok"; exit 0; }
echo "test_rebase_check: $fails check(s) failed"; exit 1
