#!/bin/sh
# Obtain and verify the pinned base: Debian's unbound source package.
usage="usage: fetch-base.sh [-p PINFILE] DESTDIR
  Puts the verified orig and Debian tarballs named in PINFILE (default:
  base.pin next to this script's directory) into DESTDIR.
  BASE_DIR=DIR   use tarballs already downloaded into DIR (offline)
  With no BASE_DIR, apt-get source fetches them through a private apt
  configuration with a deb-src entry derived from this machine's Debian entry.
  If the suite's index no longer lists the pinned revision, the pinned files
  are taken from that archive's pool (apt-helper, checked against the pins);
  failing that, the newest revision of the same upstream version is used,
  with a warning.
  On success prints the Debian tarball's file name on the last line."

set -eu
here=$(cd "$(dirname "$0")" && pwd)
pin="$here/../base.pin"
while getopts p:h opt; do
	case $opt in
	p) pin=$OPTARG ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "$usage" >&2; exit 2; }
dest=$1

die() { echo "fetch-base: error: $*" >&2; exit 1; }
warn() { echo "fetch-base: $*" >&2; }

[ -r "$pin" ] || die "cannot read pin file $pin"
. "$pin"
for v in BASE_PACKAGE BASE_DEBIAN_VERSION BASE_UPSTREAM_VERSION BASE_SUITE \
	BASE_ORIG_FILE BASE_ORIG_SHA256 BASE_DEBIAN_FILE BASE_DEBIAN_SHA256; do
	eval "[ -n \"\${$v:-}\" ]" || die "$pin does not set $v"
done

# check_sum FILE EXPECTED: fail loudly, naming both sums, on a mismatch.
check_sum() {
	got=$(sha256sum "$1" | cut -d' ' -f1)
	[ "$got" = "$2" ] || die "checksum mismatch for $(basename "$1"):
  expected sha256 $2
  got      sha256 $got
  (delete the file and fetch again, or supply the right file with BASE_DIR=DIR)"
}

# fetch_from_pool SOURCESFILE: a suite's index lists only the newest
# revision of a package, but the archive's pool keeps older files for a
# while. Download the pinned files from the pool of the entry's first URI
# with apt's own fetcher (same proxy and transport settings as apt), which
# checks them against the pinned sha256 sums before they are kept.
fetch_from_pool() {
	uri=$(sed -n 's/^URIs:[[:space:]]*//p' "$1" | head -n 1 | cut -d' ' -f1)
	[ -n "$uri" ] || return 1
	case $BASE_PACKAGE in
	lib?*) initial=$(echo "$BASE_PACKAGE" | cut -c1-4) ;;
	*) initial=$(echo "$BASE_PACKAGE" | cut -c1) ;;
	esac
	pooldir=${uri%/}/pool/main/$initial/$BASE_PACKAGE
	for f in "$BASE_ORIG_FILE:$BASE_ORIG_SHA256" \
		"$BASE_DEBIAN_FILE:$BASE_DEBIAN_SHA256"; do
		"$APT_HELPER" -q download-file "$pooldir/${f%%:*}" \
			"$work/${f%%:*}" "SHA256:${f#*:}" >>"$work/apt.log" 2>&1 || {
			rm -f "$work/${f%%:*}"
			warn "pinned ${f%%:*} is not in the archive's pool either"
			return 1
		}
	done
}
APT_HELPER=${APT_HELPER:-/usr/lib/apt/apt-helper}

mkdir -p "$dest"
# Work in a scratch directory and move verified files into DESTDIR only at
# the end, so a failed run never leaves a half-fetched or unverified file.
work=$(mktemp -d "${TMPDIR:-/tmp}/fetch-base.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
debfile=$BASE_DEBIAN_FILE

if [ -f "$dest/$BASE_ORIG_FILE" ] && [ -f "$dest/$BASE_DEBIAN_FILE" ] &&
	[ -z "${BASE_DIR:-}" ]; then
	check_sum "$dest/$BASE_ORIG_FILE" "$BASE_ORIG_SHA256"
	check_sum "$dest/$BASE_DEBIAN_FILE" "$BASE_DEBIAN_SHA256"
	echo "$debfile"
	exit 0
fi

if [ -n "${BASE_DIR:-}" ]; then
	for f in "$BASE_ORIG_FILE" "$BASE_DEBIAN_FILE"; do
		[ -f "$BASE_DIR/$f" ] || die "BASE_DIR=$BASE_DIR has no $f
  (needed: $BASE_ORIG_FILE and $BASE_DEBIAN_FILE)"
		cp "$BASE_DIR/$f" "$work/$f"
	done
else
	command -v apt-get >/dev/null || die "apt-get not found; supply the tarballs with BASE_DIR=DIR"
	aptdir=$work/apt
	mkdir -p "$aptdir/lists/partial" "$aptdir/cache/archives/partial" \
		"$aptdir/parts"
	# Derive a deb-src entry for the base's suite from the machine's first
	# Debian entry (same URIs and keyring), in a private apt configuration
	# so the machine's own sources and lists stay as they are.
	"$here/derive-src-entry.sh" "$BASE_SUITE" > "$aptdir/parts/base-src.sources" ||
		die "could not derive a deb-src entry from /etc/apt; supply the tarballs with BASE_DIR=DIR"
	set -- -o Dir::Etc::SourceList=/dev/null \
		-o Dir::Etc::SourceParts="$aptdir/parts" \
		-o Dir::State::Lists="$aptdir/lists" \
		-o Dir::Cache="$aptdir/cache" \
		-o APT::Sandbox::User=root -q
	apt-get "$@" update >"$work/apt.log" 2>&1 || {
		cat "$work/apt.log" >&2
		die "apt-get update failed for the $BASE_SUITE deb-src entry.
  To build offline, download $BASE_ORIG_FILE and $BASE_DEBIAN_FILE
  and run again with BASE_DIR=<directory holding them>"
	}
	avail=$(apt-cache "$@" showsrc "$BASE_PACKAGE" 2>/dev/null |
		sed -n 's/^Version: //p' | sort -u)
	# get_source VERSION APTOPTION...: apt-get source of that revision
	# into $work.
	get_source() {
		srcver=$1; shift
		(cd "$work" && apt-get "$@" source --download-only "$BASE_PACKAGE=$srcver") \
			>>"$work/apt.log" 2>&1 || {
			cat "$work/apt.log" >&2
			die "apt-get source $BASE_PACKAGE=$srcver failed.
  To build offline, download $BASE_ORIG_FILE and $BASE_DEBIAN_FILE
  and run again with BASE_DIR=<directory holding them>"
		}
	}
	if echo "$avail" | grep -qxF "$BASE_DEBIAN_VERSION"; then
		get_source "$BASE_DEBIAN_VERSION" "$@"
	elif fetch_from_pool "$aptdir/parts/base-src.sources"; then
		warn "pinned $BASE_PACKAGE $BASE_DEBIAN_VERSION is no longer in the $BASE_SUITE index;"
		warn "took its files from the archive's pool (verified against $(basename "$pin"))"
	else
		newest=$(echo "$avail" | grep "^$BASE_UPSTREAM_VERSION-" |
			sort -V | tail -n 1)
		[ -n "$newest" ] || die "no $BASE_PACKAGE $BASE_UPSTREAM_VERSION-* source in $BASE_SUITE (found: $(echo $avail)),
  and the pinned files are not in the archive's pool;
  supply the tarballs with BASE_DIR=DIR"
		warn "################################################################"
		warn "WARNING: pinned $BASE_PACKAGE $BASE_DEBIAN_VERSION is no longer in $BASE_SUITE;"
		warn "WARNING: using $newest instead (orig tarball still verified)."
		warn "################################################################"
		debfile=${BASE_PACKAGE}_$(echo "$newest" | sed 's/^[0-9]*://').debian.tar.xz
		get_source "$newest" "$@"
	fi
	[ -f "$work/$debfile" ] || die "apt-get source did not produce $debfile"
fi

check_sum "$work/$BASE_ORIG_FILE" "$BASE_ORIG_SHA256"
if [ "$debfile" = "$BASE_DEBIAN_FILE" ]; then
	check_sum "$work/$debfile" "$BASE_DEBIAN_SHA256"
else
	warn "WARNING: $debfile is not pinned; verified only by apt's signed index"
fi
mv "$work/$BASE_ORIG_FILE" "$work/$debfile" "$dest/"
echo "$debfile"
