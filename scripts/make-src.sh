#!/bin/sh
# Build the patch work tree: a git repository with the pristine base as one
# commit tagged "base" and one commit per patch of PATCHDIR/series (git am).
usage="usage: make-src.sh BASEDIR PATCHDIR SRCDIR
  An existing SRCDIR is kept as it is (with a warning when it differs from
  PATCHDIR), unless base.pin (\$BASE_PIN) names another base than the one
  SRCDIR was made from: then it is rebuilt from PATCHDIR, or refused when
  SRCDIR holds work that is not in PATCHDIR or has linked work trees.
  FORCE=1 rebuilds it from PATCHDIR."

set -eu
[ $# -eq 3 ] || { echo "$usage" >&2; exit 2; }
base=$(cd "$1" && pwd) pdir=$(cd "$2" && pwd) src=$3
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "make-src: error: $*" >&2; exit 1; }
. "$here/pin.sh"
pin_load || exit 1
pinid=$(pin_id)
names=$("$here/series.sh" "$pdir") || exit 1

# A work tree that differs from patches/ is work in progress: build it as
# it is and say so; FORCE=1 rebuilds it from patches/.
# The base a work tree was made from: kept in its git config; trees made
# before that was kept are recognised by their base commit's subject.
base_subject() {
	echo "Base: Unbound $BASE_UPSTREAM_VERSION with Debian's $BASE_DEBIAN_VERSION patch series"
}
if [ -d "$src/.git" ] && [ "${FORCE:-0}" != 1 ]; then
	had=$(git -C "$src" config --get steady.base 2>/dev/null || true)
	if [ -z "$had" ] && [ "$(git -C "$src" log -1 --format=%s base 2>/dev/null)" = "$(base_subject)" ]; then
		had=$pinid
		git -C "$src" config steady.base "$pinid"
	fi
	dirty=""
	if [ -n "$(git -C "$src" status --porcelain --untracked-files=no)" ]; then
		dirty="has uncommitted edits (not in patches/)"
	elif ! "$here/export-patches.sh" --check "$src" "$pdir"; then
		dirty="differs from $pdir (run make export-patches to keep its commits)"
	fi
	if [ "$had" = "$pinid" ]; then
		[ -z "$dirty" ] || echo "make-src: warning: $src $dirty; FORCE=1 rebuilds it from $pdir" >&2
		exit 0
	fi
	# base.pin names another base: the tree must be rebuilt on it.
	[ -z "$dirty" ] || die "base.pin names another base than $src was made from, and $src $dirty.
  Export or drop that work, then run again (FORCE=1 rebuilds it from $pdir, discarding it)"
	[ "$(git -C "$src" worktree list --porcelain | grep -c '^worktree ')" -le 1 ] ||
		die "base.pin names another base than $src was made from, and $src has linked work trees
  ($(git -C "$src" worktree list | sed 1d | awk '{ print $1 }' | tr '\n' ' ')): remove them (git worktree remove) or FORCE=1"
	echo "make-src: base.pin names a new base ($BASE_DEBIAN_VERSION): rebuilding $src from $pdir" >&2
fi

mkdir -p "$(dirname "$src")"
tmp="$(cd "$(dirname "$src")" && pwd)/$(basename "$src").tmp$$"
rm -rf "$tmp"
trap 'rm -rf "$tmp"' EXIT INT TERM
cp -a "$base" "$tmp"
cd "$tmp"
git init -q
git config core.autocrlf false
# A plain git format-patch in the work tree then writes what
# export-patches.sh writes (no signature with the local git version).
git config format.signature ""
# Build products live in another directory; keep editor debris out.
printf '*~\n*.orig\n*.rej\n' > .git/info/exclude
git add -A -f .
GIT_AUTHOR_DATE="2000-01-01T00:00:00Z" GIT_COMMITTER_DATE="2000-01-01T00:00:00Z" \
	git commit -q -m "$(base_subject)"
git tag base
git config steady.base "$pinid"
for p in $names; do
	git am -q --keep-cr "$pdir/$p" >/dev/null 2>"$tmp/.git/am.err" || {
		cat "$tmp/.git/am.err" >&2
		die "patch $p does not apply to the base (git am failed)"
	}
done
cd - >/dev/null
rm -rf "$src"
mv "$tmp" "$src"
trap - EXIT INT TERM
echo "make-src: $src at $(git -C "$src" rev-list --count base..HEAD) patch(es) on base"
