#!/bin/sh
# Make a root directory of another Debian release with mmdebstrap, from
# this machine's own Debian apt entry (the same URIs and keyring,
# component main), to build and test packages for that release here.
usage="usage: debian-root.sh RELEASE ROOTDIR [PACKAGE...]
  RELEASE is a Debian codename (trixie). ROOTDIR gets the apt variant
  (Essential packages and apt) plus PACKAGEs, with the release's main
  suite as its only apt source. ROOTDIR is kept and reused while its
  release, packages and source entry stay the same (ROOTDIR/.steady-root);
  otherwise it is made again in ROOTDIR.new and moved into place, so a
  failed run never leaves a half-made root. Needs root and mmdebstrap
  (scripts/install-deps.sh build installs it)."

set -eu
[ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
release=$1 root=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "debian-root: error: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (mmdebstrap makes a root directory with device files and owners)"
command -v mmdebstrap >/dev/null || die "mmdebstrap is not installed (apt-get install mmdebstrap)"

arch=$(dpkg --print-architecture)
entry=$("$here/derive-src-entry.sh" --binary "$arch" "$release") ||
	die "could not derive a $release entry from this machine's Debian apt entry"
# The keyring named by Signed-By must be inside the root too (apt there
# checks the release files with it); debian-archive-keyring puts it at
# the same path.
pkgs=$(echo "debian-archive-keyring $*" | tr ' ' '\n' | sed '/^$/d' | sort -u | tr '\n' ' ')
id=$(printf '%s\n%s\n%s\n' "$release" "$pkgs" "$entry" | sha256sum | cut -d' ' -f1)
if [ -f "$root/.steady-root" ] && [ "$(cat "$root/.steady-root")" = "$id" ]; then
	echo "debian-root: $root is $release with the same packages; kept"
	exit 0
fi

new=$root.new
rm -rf "$new"
mkdir -p "$(dirname "$root")"
printf '%s\n' "$entry" > "$root.sources"
log=$root.log
echo "debian-root: making $release in $root (log: $log)"
# shellcheck disable=SC2086
mmdebstrap --variant=apt --architectures="$arch" --format=directory \
	--include="$(echo $pkgs | tr ' ' ',')" \
	"$release" "$new" "$root.sources" > "$log" 2>&1 || {
	tail -n 20 "$log" >&2
	rm -rf "$new"
	die "mmdebstrap $release failed (log: $log)"
}
# No service starts in the root when a package is installed there.
printf '#!/bin/sh\n# debian-root.sh: no service starts in this root.\nexit 101\n' > "$new/usr/sbin/policy-rc.d"
chmod 755 "$new/usr/sbin/policy-rc.d"
echo "$id" > "$new/.steady-root"
rm -rf "$root"
mv "$new" "$root"
echo "debian-root: $release ready in $root ($(du -sm "$root" | cut -f1) MB)"
