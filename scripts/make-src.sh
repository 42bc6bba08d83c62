#!/bin/sh
# Build the patch work tree: a git repository with the pristine base as one
# commit tagged "base" and one commit per patch of PATCHDIR/series (git am).
usage="usage: make-src.sh BASEDIR PATCHDIR SRCDIR
  An existing SRCDIR is kept as it is (with a warning when it differs from
  PATCHDIR); FORCE=1 rebuilds it from PATCHDIR."

set -eu
[ $# -eq 3 ] || { echo "$usage" >&2; exit 2; }
base=$(cd "$1" && pwd) pdir=$(cd "$2" && pwd) src=$3
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "make-src: error: $*" >&2; exit 1; }

# A work tree that differs from patches/ is work in progress: build it as
# it is and say so; FORCE=1 rebuilds it from patches/.
if [ -d "$src/.git" ] && [ "${FORCE:-0}" != 1 ]; then
	if [ -n "$(git -C "$src" status --porcelain --untracked-files=no)" ]; then
		echo "make-src: warning: $src has uncommitted edits (not in patches/; FORCE=1 rebuilds it)" >&2
	elif ! "$here/export-patches.sh" --check "$src" "$pdir"; then
		echo "make-src: warning: $src differs from $pdir; run make export-patches to keep its commits (FORCE=1 discards them)" >&2
	fi
	exit 0
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
	git commit -q -m "Base: Unbound $(. "$here/../base.pin"; echo "$BASE_UPSTREAM_VERSION with Debian's $BASE_DEBIAN_VERSION patch series")"
git tag base
sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$pdir/series" | while read -r p; do
	[ -n "$p" ] || continue
	[ -f "$pdir/$p" ] || die "patch $p is listed in $pdir/series but missing"
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
