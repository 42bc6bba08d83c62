#!/bin/sh
# Unpack the verified base into a fresh source tree: upstream's orig tarball
# with Debian's patch series applied in order.
usage="usage: unpack-base.sh DLDIR DEBIAN_TARBALL DESTDIR
  DESTDIR must not exist; it is created only when every patch applied."

set -eu
[ $# -eq 3 ] || { echo "$usage" >&2; exit 2; }
dl=$1 debtar=$2 dest=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../base.pin"

die() { echo "unpack-base: error: $*" >&2; exit 1; }
[ ! -e "$dest" ] || die "$dest exists already"

# Unpack next to DESTDIR and rename at the end: a failure leaves nothing.
tmp="$dest.tmp$$"
rm -rf "$tmp"
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$tmp"
tar -xzf "$dl/$BASE_ORIG_FILE" -C "$tmp" --strip-components=1 ||
	die "cannot unpack $BASE_ORIG_FILE"
tar -xJf "$dl/$debtar" -C "$tmp" || die "cannot unpack $debtar"
# The same order dpkg-source uses for a 3.0 (quilt) package.
"$here/apply-series.sh" "$tmp" "$tmp/debian/patches" ||
	die "Debian's patch series does not apply"
mv "$tmp" "$dest"
trap - EXIT INT TERM
