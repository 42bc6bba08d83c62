#!/bin/sh
# make src follows base.pin: a work tree is kept while the pin names the
# base it was made from, rebuilt when the pin names another base, and
# refused (left as it is) when it holds work that is not in patches/.
usage="usage: test_base_change.sh BASEDIR PATCHDIR
  BASEDIR is build/base, PATCHDIR patches/ (both read only); the work
  trees are made in a temporary directory."

set -u
[ $# -eq 2 ] || { echo "$usage" >&2; exit 2; }
base=$(cd "$1" && pwd) && pdir=$(cd "$2" && pwd) || exit 2
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/steady-basechange.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0
ok() { echo "  ok: $*"; }
bad() { echo "  FAIL: $*"; fails=$((fails + 1)); }
mk() { "$top/scripts/make-src.sh" "$base" "$pdir" "$tmp/src" > "$tmp/out" 2>&1; }
subject() { git -C "$tmp/src" log -1 --format=%s base; }

# Another base: the same files under another identity (as a new Debian
# revision would be; the files themselves do not matter to make-src).
sed -e 's/^BASE_DEBIAN_VERSION=.*/&+fake1/' -e 's/^BASE_DEBIAN_SHA256=.*/BASE_DEBIAN_SHA256=0000/' \
	"$top/base.pin" > "$tmp/other.pin"
. "$top/base.pin"

mk || { cat "$tmp/out"; echo "test_base_change: make-src failed"; exit 1; }
head1=$(git -C "$tmp/src" rev-parse HEAD)
mk && [ "$(git -C "$tmp/src" rev-parse HEAD)" = "$head1" ] &&
	ok "the same pin keeps the tree" || bad "the same pin did not keep the tree: $(cat "$tmp/out")"

if BASE_PIN=$tmp/other.pin mk && subject | grep -q "$BASE_DEBIAN_VERSION+fake1" &&
	grep -q "rebuilding" "$tmp/out"; then
	ok "a new base in the pin rebuilds the tree ($(subject))"
else
	bad "a new base in the pin did not rebuild the tree: $(cat "$tmp/out"); base: $(subject)"
fi

# Work that is not in patches/ is never dropped for a new pin.
echo "/* work in progress */" >> "$tmp/src/daemon/unbound.c"
head2=$(git -C "$tmp/src" rev-parse HEAD)
if ! mk && grep -q "another base" "$tmp/out" && grep -q "work in progress" "$tmp/src/daemon/unbound.c" &&
	[ "$(git -C "$tmp/src" rev-parse HEAD)" = "$head2" ]; then
	ok "a tree with uncommitted work is refused, not rebuilt, for a new pin"
else
	bad "a tree with uncommitted work was not refused: $(cat "$tmp/out")"
fi
git -C "$tmp/src" checkout -q -- daemon/unbound.c

# A linked work tree (someone's branch) is not broken by a rebuild.
git -C "$tmp/src" worktree add -q "$tmp/wt" HEAD -b wt 2>/dev/null
if ! mk && grep -q "linked work trees" "$tmp/out"; then
	ok "a tree with linked work trees is refused for a new pin"
else
	bad "a tree with linked work trees was not refused: $(cat "$tmp/out")"
fi
git -C "$tmp/src" worktree remove --force "$tmp/wt"

# A tree made before make-src kept the base (no steady.base key) is known
# by its base commit's subject: kept under the right pin, rebuilt otherwise.
mk || bad "rebuild back to the pinned base failed: $(cat "$tmp/out")"
git -C "$tmp/src" config --unset steady.base
head3=$(git -C "$tmp/src" rev-parse HEAD)
mk && [ "$(git -C "$tmp/src" rev-parse HEAD)" = "$head3" ] &&
	ok "an older tree of the pinned base is kept" || bad "an older tree of the pinned base was not kept: $(cat "$tmp/out")"
git -C "$tmp/src" config --unset steady.base
BASE_PIN=$tmp/other.pin mk && subject | grep -q "+fake1" &&
	ok "an older tree of another base is rebuilt" || bad "an older tree of another base was not rebuilt: $(cat "$tmp/out")"

[ $fails -eq 0 ] && { echo "test_base_change: ok"; exit 0; }
echo "test_base_change: $fails check(s) failed"; exit 1
