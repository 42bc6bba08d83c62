#!/bin/sh
# Write the tree of REF in an upstream git directory (as the fetch tool
# leaves it: bare, some large blobs absent) into OUTDIR, file by file. A
# blob that is absent is taken from FILLDIR (e.g. the 1.22.0 base) when a
# file at the same path there has the same blob id; else it is listed
# and the script fails. OUTDIR becomes a git work tree with one commit,
# tagged "upstream", named after REF's commit, for git am / format-patch.
usage="usage: upstream-tree.sh GITDIR REF OUTDIR [FILLDIR]"

set -eu
[ $# -ge 3 ] && [ $# -le 4 ] || { echo "$usage" >&2; exit 2; }
gitdir=$1 ref=$2 out=$3 fill=${4:-}
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
echo "$commit"
