#!/bin/sh
# Check the series' man page templates (doc/*.in) against upstream's
# generator: NLnet Labs' unbound-manual repository builds them from the
# doc/*.rst sources with Sphinx ("make man unbound_dir=..."). The released
# base's .in files carry the release's date and version and some text that
# its .rst no longer has, so the check compares changes, not files: the
# generator's output for the series' .rst minus its output for the base's
# .rst, applied to the base's .in files, must give the series' .in files.
# Needs build/src (make src) and a copy of unbound-manual (its Makefile
# makes a Python venv with Sphinx from PyPI, in that copy).
usage="usage: scripts/man-check.sh UNBOUND_MANUAL_DIR [WORKDIR]"

set -eu
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
manual=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
src=$top/build/src
work=${2:-$top/build/man-check}
[ -f "$manual/scripts/prepare_manpages.sh" ] || { echo "$usage: $manual is not unbound-manual" >&2; exit 2; }
git -C "$src" rev-parse -q --verify base >/dev/null || { echo "man-check: no $src (make src)" >&2; exit 2; }

rm -rf "$work"
mkdir -p "$work/base" "$work/series" "$work/result"
git -C "$src" archive base doc | tar -x -C "$work/base"
git -C "$src" archive HEAD doc | tar -x -C "$work/series"
git -C "$src" archive base doc | tar -x -C "$work/result"
# generate the .in of both trees in place
for t in base series; do
	make -s -C "$manual" man unbound_dir="$work/$t" >"$work/$t.log" 2>&1 ||
		{ echo "man-check: make man failed, see $work/$t.log" >&2; exit 1; }
done

fail=0
for f in "$work/series/doc/"*.in; do
	name=$(basename "$f")
	[ -f "$work/base/doc/$name" ] || continue
	case $name in example.conf.in) continue ;; esac
	# the series' change to the generated page, onto the released page
	if ! diff -u "$work/base/doc/$name" "$f" >"$work/$name.delta"; then
		patch -s -p0 --no-backup-if-mismatch "$work/result/doc/$name" \
			<"$work/$name.delta" || { echo "man-check: $name: the generated change does not apply" >&2; fail=1; continue; }
	fi
	if git -C "$src" show "HEAD:doc/$name" | cmp -s - "$work/result/doc/$name"; then
		echo "ok: doc/$name"
	else
		echo "differs: doc/$name (want $work/result/doc/$name)"
		git -C "$src" show "HEAD:doc/$name" | diff -u - "$work/result/doc/$name" | head -40
		fail=1
	fi
done
exit $fail
