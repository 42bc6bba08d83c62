#!/bin/sh
# make upstream's export on a made-up series: topics from "Topic:" lines,
# a fork-only patch left out, a patch that needs Debian's series reported
# (and the rest still exported), doc/Changelog entries merged the way
# upstream writes them, and every exported set applying with git am to the
# pristine tarball.
usage="usage: test_upstream_export.sh BASEDIR DLDIR
  BASEDIR is build/base (read only), DLDIR build/dl."

set -u
[ $# -eq 2 ] || { echo "$usage" >&2; exit 2; }
base=$(cd "$1" && pwd) && dl=$(cd "$2" && pwd) || exit 2
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$top/base.pin"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/steady-upstream.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT INT TERM
fails=0
check() {	# check DESCRIPTION COMMAND...
	d=$1; shift
	if "$@" >/dev/null 2>&1; then echo "  ok: $d"; else echo "  FAIL: $d"; fails=$((fails + 1)); fi
}
export GIT_AUTHOR_NAME="Test Author" GIT_AUTHOR_EMAIL="test@example.org"
export GIT_COMMITTER_NAME="Test Author" GIT_COMMITTER_EMAIL="test@example.org"
export GIT_AUTHOR_DATE="2026-11-22T00:00:00Z" GIT_COMMITTER_DATE="2026-11-22T00:00:00Z"

# Two lines of a file that Debian's series of the pinned base changes,
# picked from what it changes there (not written down, so any base.pin
# works): a line that only Debian's series adds (a change of it cannot
# apply to the pristine tarball), and the first line after that block (a
# change of it has Debian's lines as context: it applies to the pristine
# tarball only with fuzz). The first file of the series where such a pair
# exists is taken.
picks=""
for cf in $(sed -n 's|^+++ b/||p' "$base"/debian/patches/*.patch 2>/dev/null | sed 's/[[:space:]].*//' | sort -u); do
	[ -f "$base/$cf" ] || continue
	tar -xzOf "$dl/$BASE_ORIG_FILE" --wildcards "*/$cf" > "$tmp/pristine.file" 2>/dev/null || continue
	picks=$(diff -U0 "$tmp/pristine.file" "$base/$cf" | awk -v f="$base/$cf" '
	BEGIN { while ((getline l < f) > 0) { n++; line[n] = l; count[l]++ } }
	/^@@/ && !done {
		split($3, a, ","); s = substr(a[1], 2) + 0; c = (a[2] == "" ? 1 : a[2] + 0)
		if (c == 0) next
		deb = 0
		for (i = s; i < s + c; i++) if (line[i] ~ /[^[:space:]]/ && count[line[i]] == 1) deb = i
		after = 0
		for (i = s + c; i <= n && i < s + c + 3; i++) if (line[i] ~ /[^[:space:]]/) { after = i; break }
		if (deb && after && count[line[after]] == 1) { print deb, after; done = 1 }
	}')
	[ -n "$picks" ] || continue
	fuzzline=${picks#* }
	grep -qxF "$(sed -n "${fuzzline}p" "$base/$cf")" "$tmp/pristine.file" && break
	picks=""
done
[ -n "$picks" ] || { echo "test_upstream_export: Debian's series of the base changes no usable line in any file"; exit 1; }
debline=${picks% *} fuzzline=${picks#* }
echo "  ($cf: line $debline only with Debian's series, line $fuzzline after it)"
# change_line N: append " (changed)" to line N of that file.
change_line() {
	awk -v n="$1" 'NR == n { $0 = $0 " (changed)" } { print }' "$cf" > "$tmp/ex" &&
		mv "$tmp/ex" "$cf"
}

# A work tree like make src's: the base with Debian's series, then commits.
cp -a "$base" "$tmp/src"
cd "$tmp/src" || exit 2
git init -q && git add -A -f . && git commit -q -m base && git tag base
entry() {	# entry TEXT: a doc/Changelog entry at the top
	printf '22 November 2026: Test\n\t- %s\n\n' "$1" | cat - doc/Changelog > "$tmp/cl" &&
		mv "$tmp/cl" doc/Changelog
}
echo "fork only" >> README.md; entry "Fork only."
git commit -q -a -m "Fork-only change" -m "Not for upstream." -m "Topic: fork-only"
printf '\nAlpha one.\n' >> doc/FEATURES; entry "Alpha one."
git commit -q -a -m "Alpha one" -m "Why alpha. Tested with unit tests." -m "Topic: alpha"
# This line exists only with Debian's series.
change_line "$debline"
entry "Needs Debian."
git commit -q -a -m "Needs Debian's series" -m "Topic: beta"
# The fork's own form: the entry in the message, DEP-3 trailers.
printf 'Alpha two.\n' >> doc/FEATURES
git commit -q -a -m "Alpha two" -m "More alpha." \
	-m "$(printf 'Changelog entry:\n22 November 2026: Test\n\t- Alpha two.')" \
	-m "$(printf 'Topic: alpha\nOrigin: vendor, Test\nForwarded: no\nLast-Update: 2026-11-22')"
sed -i 's/^Alpha two\.$/Alpha two, changed by gamma./' doc/FEATURES; entry "Gamma."
git commit -q -a -m "Gamma on alpha" -m "Topic: gamma"
# Its context holds lines of Debian's series: applies to pristine with fuzz.
change_line "$fuzzline"
entry "Delta."
git commit -q -a -m "Fuzzy delta" -m "Topic: delta"
printf 'No topic.\n' >> doc/TODO; entry "No topic."
git commit -q -a -m "No topic"
mkdir "$tmp/patches"
git format-patch -q --zero-commit --no-signature -N -o "$tmp/patches" base..HEAD
(cd "$tmp/patches" && ls *.patch) > "$tmp/patches/series"
cd "$top" || exit 2

CHECK_RESULTS=/nonexistent "$top/scripts/make-upstream.py" "$dl" "$tmp/patches" "$tmp/out" > "$tmp/out.log" 2>&1
rc=$?
cat "$tmp/out.log"
out=$tmp/out
check "the export succeeds although one patch does not apply" [ $rc -eq 0 ]
check "the patch that needs Debian's series is named" \
	grep -q "PROBLEM: 0003-Needs-Debian-s-series.patch does not apply to pristine $BASE_UPSTREAM_VERSION without Debian's series (failed in: $cf)" "$tmp/out.log"
check "the patch without a topic is named" grep -q "warning: 0007-No-topic.patch has no topic" "$tmp/out.log"
check "the patch that needs fuzz is named" \
	grep -q "PROBLEM: 0006-Fuzzy-delta.patch applies to pristine $BASE_UPSTREAM_VERSION only with fuzz" "$tmp/out.log"
check "series/ has the 5 patches for upstream that apply" [ "$(ls "$out/series" | wc -l)" -eq 5 ]
check "the fork-only patch is listed as not for upstream" \
	sh -c "sed -n '/^Not for upstream/,/^\$/p' '$out/README' | grep -q 0001-Fork-only-change.patch"
check "the fork-only patch is not exported" sh -c "! grep -rq 'Fork-only change' '$out/series' '$out/topics'"
check "topic alpha has a cover letter and its 2 patches" \
	[ "$(ls "$out/topics/01-alpha" | tr '\n' ' ')" = "0000-cover-letter.patch 0001-Alpha-one.patch 0002-Alpha-two.patch " ]
cover=$out/topics/01-alpha/0000-cover-letter.patch
check "the cover letter has a subject, what/why, measured effect, how tested" \
	sh -c "grep -q '^Subject: \[PATCH 0/2\] alpha' '$cover' && grep -q '^What and why' '$cover' &&
		grep -q '^Measured effect' '$cover' && grep -q '^- \[1/2\] Tested with unit tests.' '$cover'"
printf '22 November 2026: Test\n\t- Alpha one.\n\t- Alpha two.\n\n' > "$tmp/want"
check "the cover letter has the Changelog entries in one block, upstream's format" \
	sh -c "grep -A3 '^22 November 2026: Test\$' '$cover' | cmp -s - '$tmp/want'"
check "Topic: lines are not in the exported messages" sh -c "! grep -rq '^Topic:' '$out/series' '$out/topics'"
check "DEP-3 trailers and the message's Changelog entry are not in the exported messages" \
	sh -c "! grep -rqE '^(Origin|Forwarded|Last-Update|Changelog entry):' '$out/series' '$out/topics'"
check "the message's Changelog entry is a doc/Changelog hunk of the exported patch" \
	sh -c "grep -q '^+	- Alpha two[.]' '$out/topics/01-alpha/0002-Alpha-two.patch'"
# Each set applies with git am to a tree of the pristine tarball.
check "topic beta (no patch applies) is named as not exported" grep -q "^  beta: NOT EXPORTED" "$out/README"
check "topic gamma is said to need the series before it" \
	grep -q "topics/02-gamma/  Gamma on alpha (1 patch, applies on top of series/ patches 1..2)" "$out/README"
for set in series topics/01-alpha topics/03-delta topics/04-unsorted "series/0001-* series/0002-* topics/02-gamma"; do
	rm -rf "$tmp/pristine"
	mkdir "$tmp/pristine"
	tar -xzf "$dl/$BASE_ORIG_FILE" -C "$tmp/pristine" --strip-components=1
	check "$set applies with git am to pristine $BASE_UPSTREAM_VERSION" sh -c "
		cd '$tmp/pristine' && git init -q && git add -A -f . && git commit -q -m upstream &&
		cd '$out' && files=\$(for s in $set; do ls -d \$s | grep -q '[.]patch\$' && echo \$s || ls \$s/*.patch; done | grep -v cover-letter) &&
		[ -n \"\$files\" ] && cd '$tmp/pristine' && git am -q \$(for f in \$files; do echo '$out'/\$f; done)"
done
check "doc/Changelog after series/ is one block with the 5 entries" sh -c "
	head -n 5 '$tmp/pristine/doc/Changelog' >/dev/null && cd '$tmp' && rm -rf p2 && mkdir p2 &&
	tar -xzf '$dl/$BASE_ORIG_FILE' -C p2 --strip-components=1 && cd p2 && git init -q &&
	git add -A -f . && git commit -q -m u && git am -q '$out'/series/*.patch &&
	printf '22 November 2026: Test\n\t- Alpha one.\n\t- Alpha two.\n\t- Gamma.\n\t- Delta.\n\t- No topic.\n\n' > ../want2 &&
	head -n 7 doc/Changelog | cmp -s - ../want2"

# --onto: the same series onto an upstream tree (as scripts/upstream-tree.sh
# writes one) that has the change of "Alpha one" already, with the fork's
# base for the merges.
mkdir "$tmp/onto"
tar -xzf "$dl/$BASE_ORIG_FILE" -C "$tmp/onto" --strip-components=1
printf '\nAlpha one.\n' >> "$tmp/onto/doc/FEATURES"
(cd "$tmp/onto" && git init -q && git add -A -f . &&
	git commit -q -m "upstream 0123abc 2026-01-01: a test tree" && git tag upstream)
CHECK_RESULTS=/nonexistent "$top/scripts/make-upstream.py" --onto "$tmp/onto" --fork-base "$base" \
	"$dl" "$tmp/patches" "$tmp/out2" > "$tmp/out2.log" 2>&1
rc=$?
cat "$tmp/out2.log"
out2=$tmp/out2
check "--onto: the export succeeds" [ $rc -eq 0 ]
check "--onto: the README names the tree" grep -q "^Applies to upstream 0123abc (2026-01-01): " "$out2/README"
check "--onto: a patch whose change the tree has is named and left out" \
	sh -c "grep -q '^make-upstream: present   0002-Alpha-one.patch' '$tmp/out2.log' &&
		! grep -rq 'Subject: .*Alpha one' '$out2/series'"
check "--onto: git/ has the fork's base and the 7 patches on it (branch fork-base), for the merges" \
	[ "$(git -C "$out2/git" rev-list --count fork-base)" -eq 8 ]
check "--onto: a topic exported on the series says how much of it in NEEDS" \
	sh -c "cat '$out2'/topics/*-gamma/NEEDS | grep -qx 'series [0-9]*'"
# apply_sets: series/, and every topic set after the series/ patches
# its NEEDS names, apply with git am to a clone of the tree
apply_sets() {
	rm -rf "$tmp/o2" && git clone -q "$tmp/onto" "$tmp/o2" && cd "$tmp/o2" || return 1
	git am -q "$out2"/series/*.patch || return 1
	for set_dir in "$out2"/topics/*/; do
		n=0
		[ ! -f "$set_dir/NEEDS" ] || n=$(sed -n 's/^series //p' "$set_dir/NEEDS")
		git checkout -q -f upstream &&
			git am -q $(ls "$out2"/series/*.patch | head -n "$n") \
				$(ls "$set_dir"*.patch | grep -v cover-letter) || return 1
	done
	cd "$top"
}
check "--onto: series/ and each topic set (after its NEEDS) apply with git am to the tree" apply_sets
[ $fails -eq 0 ] && { echo "test_upstream_export: ok"; exit 0; }
echo "test_upstream_export: $fails check(s) failed"; exit 1
