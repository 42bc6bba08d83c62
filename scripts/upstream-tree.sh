#!/bin/sh
# Write the tree of REF in an upstream git directory (as the fetch tool
# leaves it: bare, some large blobs absent) into OUTDIR, file by file. A
# blob that is absent is taken from FILLDIR (e.g. the 1.22.0 base) when a
# file at the same path there has the same blob id; else it is listed
# and the script fails. OUTDIR becomes a git work tree with one commit,
# tagged "upstream", named after REF's commit, for git am / format-patch.
#
# With RELEASE_TAG and RELEASE_TARBALL, the changes of a release made
# after REF branched off (e.g. a security release, whose tarball is
# published before its branch is merged into master) are merged in: the
# files of the tarball that RELEASE_TAG's tree has (the release before
# it) go into a commit of that tree and one of the tarball, which is
# cherry-picked onto REF's tree; tag "upstream" is then the result, and
# "upstream-ref" REF's tree. A conflict fails the script.
usage="usage: upstream-tree.sh GITDIR REF OUTDIR [FILLDIR [RELEASE_TAG RELEASE_TARBALL]]"

set -eu
[ $# -eq 3 ] || [ $# -eq 4 ] || [ $# -eq 6 ] || { echo "$usage" >&2; exit 2; }
gitdir=$1 ref=$2 out=$3 fill=${4:-} rtag=${5:-} rtar=${6:-}
[ -z "$rtar" ] || rtar=$(cd "$(dirname "$rtar")" && pwd)/$(basename "$rtar")
commit=$(git -C "$gitdir" rev-parse --verify "$ref^{commit}")
[ ! -e "$out" ] || { echo "upstream-tree: $out exists" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
missing=""
git -C "$gitdir" ls-tree -r "$commit" | while read -r mode type sha path; do
	[ "$type" = blob ] || continue
	mkdir -p "$out/$(dirname "$path")"
	if git -C "$gitdir" cat-file blob "$sha" > "$out/$path" 2>/dev/null; then :
	elif [ -n "$fill" ] && [ -f "$fill/$path" ] &&
		[ "$(git hash-object "$fill/$path")" = "$sha" ]; then
		cp "$fill/$path" "$out/$path"
		echo "upstream-tree: $path: absent blob, same file taken from $fill" >&2
	else
		echo "upstream-tree: $path: blob $sha absent" >&2
		echo "$path" >> "$out/.absent"
	fi
	[ "$mode" = 100755 ] && chmod +x "$out/$path"
	[ "$mode" = 120000 ] && { t=$(cat "$out/$path"); rm "$out/$path"; ln -s "$t" "$out/$path"; }
	true
done
if [ -f "$out/.absent" ]; then
	echo "upstream-tree: $(wc -l < "$out/.absent") files absent, see $out/.absent" >&2
	exit 1
fi
cd "$out"
git init -q
git add -A
git -c user.name=upstream -c user.email=upstream@invalid commit -q \
	-m "upstream $(git -C "$gitdir" log -1 --format='%h %cs: %s' "$commit")"
git tag upstream
if [ -n "$rtag" ]; then
	rel=$(mktemp -d "${TMPDIR:-/tmp}/upstream-tree.XXXXXX")
	trap 'rm -rf "$rel"' EXIT
	mkdir "$rel/tar"
	tar -xzf "$rtar" -C "$rel/tar" --strip-components=1
	git -C "$gitdir" ls-tree -r "$rtag^{commit}" > "$rel/lstree"
	git checkout -q --orphan release-base
	git rm -rqf .
	# the release tag's files that the tarball has (it also has the
	# generated parser, which git does not)
	while read -r mode type sha path; do
		[ "$type" = blob ] && [ -f "$rel/tar/$path" ] || continue
		mkdir -p "$(dirname "$path")"
		if ! git -C "$gitdir" cat-file blob "$sha" > "$path" 2>/dev/null; then
			[ "$(git hash-object "$rel/tar/$path")" = "$sha" ] || {
				echo "upstream-tree: $rtag:$path: blob $sha absent" >&2; exit 1; }
			cp "$rel/tar/$path" "$path"
		fi
		echo "$path" >> "$rel/paths"
	done < "$rel/lstree"
	git add -A
	git -c user.name=upstream -c user.email=upstream@invalid commit -q -m "$rtag"
	while read -r path; do cp "$rel/tar/$path" "$path"; done < "$rel/paths"
	git add -A
	git -c user.name=upstream -c user.email=upstream@invalid commit -q \
		-m "$(basename "$rtar"): its changes since $rtag"
	git checkout -q -B upstream-merged upstream
	if ! git -c user.name=upstream -c user.email=upstream@invalid cherry-pick release-base \
		> "$rel/pick.log" 2>&1; then
		cat "$rel/pick.log" >&2
		echo "upstream-tree: $(basename "$rtar") does not merge into $ref" >&2
		exit 1
	fi
	git -c user.name=upstream -c user.email=upstream@invalid commit -q --amend \
		-m "upstream $(git -C "$gitdir" log -1 --format='%h %cs' "$commit") with $(basename "$rtar") merged: its changes since $rtag"
	git tag upstream-ref upstream
	git tag -f upstream HEAD > /dev/null
	git branch -q -D release-base
fi
echo "$commit"
