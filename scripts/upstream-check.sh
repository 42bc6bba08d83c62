#!/bin/sh
# Check upstream topics (upstream/TOPIC/*.patch, git format-patch output)
# against an upstream tree: for each topic, a copy of the tree gets the
# patches (git apply), is configured as upstream's CI configures
# (--enable-debug --disable-flto), built (the lexer and parser generated
# by the build, as from a checkout) and runs upstream's make test; topics
# that touch services/authzone.c or services/rpz.c also run the auth tdir
# tests. Prints one line per topic:
#   TOPIC: applied, built, upstream: N passed, M failed [; tdir: ...]
# Logs and trees are in build/upstream-check/TOPIC.
usage="usage: upstream-check.sh UPSTREAM_TREE [TOPIC ...]
  UPSTREAM_TREE: an upstream checkout (or scripts/upstream-tree.sh output)
  TOPIC: a directory name under upstream/ (default: all of them)"

set -u
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
tree=$(cd "$1" && pwd) || exit 2
shift
top=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] || set -- $(cd "$top/upstream" && ls -d */ | tr -d /)
commit=$(git -C "$tree" log -1 --format='%h %s' upstream 2>/dev/null ||
	git -C "$tree" log -1 --format='%h %s' 2>/dev/null || echo "not a git tree")
echo "upstream-check: against $tree ($commit)"
rc=0
for topic; do
	dir=$top/upstream/$topic
	out=$top/build/upstream-check/$topic
	rm -rf "$out"
	mkdir -p "$out"
	cp -a "$tree/." "$out/src"
	rm -rf "$out/src/.git"
	line="$topic:"
	# The copy is a repository of its own: git apply in a directory of
	# another work tree (build/ is in this one) takes the patch's paths
	# from that tree's top, and skips them without an error.
	if ! (cd "$out/src" && git init -q && git add -A &&
		git -c user.name=check -c user.email=check@invalid commit -q -m upstream &&
		for p in "$dir"/*.patch; do
		git apply --whitespace=nowarn "$p" || exit 1; done &&
		git diff --stat && [ -n "$(git status --porcelain)" ]) > "$out/apply.log" 2>&1; then
		echo "$line not applied (see $out/apply.log)"; rc=1; continue
	fi
	line="$line applied,"
	if ! (cd "$out/src" && ./configure --enable-debug --disable-flto &&
		make -j"${JOBS:-2}" && make -j"${JOBS:-2}" tests) > "$out/build.log" 2>&1; then
		echo "$line not built (see $out/build.log)"; rc=1; continue
	fi
	line="$line built,"
	res=$("$top/testcode/upstream-unit.sh" "$out/src" | tail -n 1 | sed 's/ (log.*//')
	case $res in *" 0 failed") ;; *) rc=1 ;; esac
	line="$line $res"
	if grep -q '^diff --git a/services/\(authzone\|rpz\)\.c' "$dir"/*.patch; then
		tres=$("$top/testcode/upstream-tdir.sh" "$out/src" | grep -E 'passed|failed' | tail -n 1)
		line="$line; $tres"
	fi
	echo "$line"
done
exit $rc
