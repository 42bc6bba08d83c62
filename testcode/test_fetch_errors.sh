#!/bin/sh
# Error paths of the base fetch and patch scripts: a checksum mismatch, a
# missing tarball, a patch listed but missing, a patch that does not apply,
# each with a clear message, a non-zero exit, and nothing left half-done.
usage="usage: test_fetch_errors.sh DLDIR   (DLDIR holds the verified tarballs)"

set -u
[ $# -eq 1 ] || { echo "$usage" >&2; exit 2; }
dl=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/base.pin"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/steady-fetch-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0
ok() { echo "  ok: $*"; }
bad() { echo "  FAIL: $*"; fails=$((fails + 1)); }
# expect_fail NAME PATTERN CMD...: CMD must exit non-zero and print PATTERN.
expect_fail() {
	name=$1 pat=$2; shift 2
	if "$@" > "$tmp/out" 2>&1; then
		bad "$name: exited 0"; sed 's/^/    /' "$tmp/out"
	elif ! grep -q -- "$pat" "$tmp/out"; then
		bad "$name: output lacks '$pat'"; sed 's/^/    /' "$tmp/out"
	else
		ok "$name"
	fi
}

# 1. Corrupted orig tarball in BASE_DIR: mismatch names both sums, and the
# destination gets no file.
mkdir -p "$tmp/corrupt" "$tmp/dest1"
cp "$dl/$BASE_ORIG_FILE" "$dl/$BASE_DEBIAN_FILE" "$tmp/corrupt/"
printf 'x' >> "$tmp/corrupt/$BASE_ORIG_FILE"
got=$(sha256sum "$tmp/corrupt/$BASE_ORIG_FILE" | cut -d' ' -f1)
expect_fail "bad checksum is refused" "expected sha256 $BASE_ORIG_SHA256" \
	env BASE_DIR="$tmp/corrupt" "$top/scripts/fetch-base.sh" "$tmp/dest1"
grep -q "got      sha256 $got" "$tmp/out" && ok "mismatch names the sum it got" ||
	bad "mismatch does not name the sum it got ($got)"
[ -z "$(ls -A "$tmp/dest1")" ] && ok "nothing left in the destination" ||
	bad "files left in the destination: $(ls "$tmp/dest1")"

# 2. Corrupted Debian tarball, with a good orig.
cp "$dl/$BASE_ORIG_FILE" "$tmp/corrupt/"
printf 'x' >> "$tmp/corrupt/$BASE_DEBIAN_FILE"
expect_fail "bad Debian tarball checksum is refused" \
	"checksum mismatch for $BASE_DEBIAN_FILE" \
	env BASE_DIR="$tmp/corrupt" "$top/scripts/fetch-base.sh" "$tmp/dest1"

# 3. BASE_DIR without the tarballs says which files it needs.
mkdir -p "$tmp/empty"
expect_fail "missing offline tarball is named" "has no $BASE_ORIG_FILE" \
	env BASE_DIR="$tmp/empty" "$top/scripts/fetch-base.sh" "$tmp/dest1"

# 4. The good files pass offline.
mkdir -p "$tmp/good"
cp "$dl/$BASE_ORIG_FILE" "$dl/$BASE_DEBIAN_FILE" "$tmp/good/"
if BASE_DIR="$tmp/good" "$top/scripts/fetch-base.sh" "$tmp/dest2" > "$tmp/out" 2>&1 &&
	[ -f "$tmp/dest2/$BASE_ORIG_FILE" ]; then
	ok "verified offline fetch"
else
	bad "verified offline fetch failed"; sed 's/^/    /' "$tmp/out"
fi

# 5. A series naming a patch that does not exist.
"$top/scripts/unpack-base.sh" "$dl" "$BASE_DEBIAN_FILE" "$tmp/tree" > /dev/null 2>&1 ||
	bad "unpack of the good base failed"
mkdir -p "$tmp/p1"
echo "0001-not-there.patch" > "$tmp/p1/series"
expect_fail "missing patch is named" "patch 0001-not-there.patch is listed" \
	"$top/scripts/apply-series.sh" "$tmp/tree" "$tmp/p1"

# 6. A patch whose hunk does not match names the patch and the file.
mkdir -p "$tmp/p2"
cat > "$tmp/p2/0001-bad.patch" <<'EOF'
--- a/util/storage/lruhash.c
+++ b/util/storage/lruhash.c
@@ -1,3 +1,3 @@
-this line is not in lruhash.c
+neither is this one
 nor this
EOF
echo "0001-bad.patch" > "$tmp/p2/series"
expect_fail "failing patch is named" "patch 0001-bad.patch does not apply" \
	"$top/scripts/apply-series.sh" "$tmp/tree" "$tmp/p2"
grep -q "failed in: util/storage/lruhash.c" "$tmp/out" &&
	ok "failing file is named" || { bad "failing file not named"; sed 's/^/    /' "$tmp/out"; }

# 7. make-src with a missing patch leaves no work tree behind.
expect_fail "make-src refuses a missing patch" "0001-not-there.patch" \
	"$top/scripts/make-src.sh" "$tmp/tree" "$tmp/p1" "$tmp/src"
[ ! -e "$tmp/src" ] && ok "no half-built work tree" || bad "work tree left behind"

# 8. A wrong pin: unpack refuses an existing destination.
expect_fail "unpack refuses to overwrite" "exists already" \
	"$top/scripts/unpack-base.sh" "$dl" "$BASE_DEBIAN_FILE" "$tmp/tree"

# 9. apt failing: the error says how to supply the files offline. A fake
# apt-get/apt-cache on PATH stands in for the archive.
mkdir -p "$tmp/fakebin" "$tmp/fakefiles"
cat > "$tmp/fakebin/apt-get" <<'EOF'
#!/bin/sh
for a; do
	case $a in
	update) [ -z "${FAKE_APT_FAIL:-}" ] || { echo "E: Failed to fetch (fake)"; exit 100; }; exit 0 ;;
	source) cp "$FAKE_APT_FILES"/* . ; exit 0 ;;
	esac
done
exit 1
EOF
cat > "$tmp/fakebin/apt-cache" <<'EOF'
#!/bin/sh
for v in $FAKE_APT_VERSIONS; do echo "Package: unbound"; echo "Version: $v"; echo; done
EOF
# The archive's pool: apt-helper download-file URI TARGET SHA256:SUM copies
# the file named by the URI from FAKE_POOL (absent: "404"), checking the sum.
cat > "$tmp/fakebin/apt-helper" <<'EOF'
#!/bin/sh
[ "$1" = -q ] && shift
[ "$1" = download-file ] || exit 1
echo "$2" >> "$FAKE_POOL.log"
f=$FAKE_POOL/$(basename "$2")
[ -f "$f" ] || { echo "E: 404 Not Found"; exit 100; }
[ "$(sha256sum < "$f" | cut -d' ' -f1)" = "${4#SHA256:}" ] ||
	{ echo "E: Hash Sum mismatch"; exit 100; }
cp "$f" "$3"
EOF
chmod +x "$tmp/fakebin/apt-get" "$tmp/fakebin/apt-cache" "$tmp/fakebin/apt-helper"
export APT_HELPER="$tmp/fakebin/apt-helper" FAKE_POOL="$tmp/nopool"
expect_fail "apt failure explains BASE_DIR" "run again with BASE_DIR=" \
	env PATH="$tmp/fakebin:$PATH" FAKE_APT_FAIL=1 \
	"$top/scripts/fetch-base.sh" "$tmp/dest3"

# 10. The pinned revision gone from the archive: the newest revision of the
# same upstream version is used with a loud warning, the orig tarball still
# verified. The index's other versions are made up around base.pin's: an
# older and a newer upstream version, an older revision.
newver=$(echo "$BASE_DEBIAN_VERSION" | sed 's/$/.9/')
newdeb=unbound_$newver.debian.tar.xz
older=0.1-1 newer=99.0-1 oldrev=$BASE_UPSTREAM_VERSION-0~1
cp "$dl/$BASE_ORIG_FILE" "$tmp/fakefiles/"
cp "$dl/$BASE_DEBIAN_FILE" "$tmp/fakefiles/$newdeb"
if env PATH="$tmp/fakebin:$PATH" FAKE_APT_FILES="$tmp/fakefiles" \
	FAKE_APT_VERSIONS="$older $newver $oldrev $newer" \
	"$top/scripts/fetch-base.sh" "$tmp/dest4" > "$tmp/out" 2>&1 &&
	grep -q "WARNING: using $newver instead" "$tmp/out" &&
	[ "$(tail -n 1 "$tmp/out")" = "$newdeb" ] && [ -f "$tmp/dest4/$newdeb" ]; then
	ok "fallback to the newest $BASE_UPSTREAM_VERSION revision, with a warning"
else
	bad "fallback to the newest revision"; sed 's/^/    /' "$tmp/out"
fi
printf 'x' >> "$tmp/fakefiles/$BASE_ORIG_FILE"
expect_fail "fallback still verifies the orig tarball" \
	"checksum mismatch for $BASE_ORIG_FILE" \
	env PATH="$tmp/fakebin:$PATH" FAKE_APT_FILES="$tmp/fakefiles" \
	FAKE_APT_VERSIONS="$newver" "$top/scripts/fetch-base.sh" "$tmp/dest5"

# 11. The pinned revision gone from the index but still in the pool: the
# pinned files are used (no newer revision), from the pool of the URI of
# the machine's Debian entry.
mkdir -p "$tmp/pool"
cp "$dl/$BASE_ORIG_FILE" "$dl/$BASE_DEBIAN_FILE" "$tmp/pool/"
if env PATH="$tmp/fakebin:$PATH" FAKE_APT_FILES="$tmp/fakefiles" FAKE_POOL="$tmp/pool" \
	FAKE_APT_VERSIONS="$newver $newer" \
	"$top/scripts/fetch-base.sh" "$tmp/dest6" > "$tmp/out" 2>&1 &&
	grep -q "took its files from the archive's pool" "$tmp/out" &&
	! grep -q "WARNING: using" "$tmp/out" &&
	[ "$(tail -n 1 "$tmp/out")" = "$BASE_DEBIAN_FILE" ] &&
	[ -f "$tmp/dest6/$BASE_DEBIAN_FILE" ] && [ -f "$tmp/dest6/$BASE_ORIG_FILE" ]; then
	ok "pinned files from the pool when the index lost them"
else
	bad "pinned files from the pool"; sed 's/^/    /' "$tmp/out"
fi
uri=$("$top/scripts/derive-src-entry.sh" "$BASE_SUITE" 2>/dev/null | sed -n 's/^URIs: //p' | cut -d' ' -f1)
if [ -n "$uri" ]; then
	grep -qxF "${uri%/}/pool/main/u/unbound/$BASE_ORIG_FILE" "$tmp/pool.log" &&
		ok "pool URI derived from the machine's entry" ||
		{ bad "pool URI not derived from the machine's entry"; sed 's/^/    /' "$tmp/pool.log"; }
fi

# 12. A pool file with the wrong contents is refused and nothing is kept.
printf 'x' >> "$tmp/pool/$BASE_DEBIAN_FILE"
expect_fail "corrupt pool file and no $BASE_UPSTREAM_VERSION revision is an error" \
	"not in the archive's pool" \
	env PATH="$tmp/fakebin:$PATH" FAKE_APT_FILES="$tmp/fakefiles" FAKE_POOL="$tmp/pool" \
	FAKE_APT_VERSIONS="$newer" "$top/scripts/fetch-base.sh" "$tmp/dest7"
[ -z "$(ls -A "$tmp/dest7" 2>/dev/null)" ] && ok "nothing left after the pool failure" ||
	bad "files left in the destination: $(ls "$tmp/dest7")"

if [ $fails -eq 0 ]; then echo "test_fetch_errors: ok"; exit 0; fi
echo "test_fetch_errors: $fails check(s) failed"
exit 1
