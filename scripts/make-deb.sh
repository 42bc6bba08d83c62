#!/bin/sh
# Build binary .debs of the fork from Debian's own packaging of the pinned
# base: the debian/ directory of the same source package, with our patch
# series appended to Debian's quilt series in debian/patches/steady/.
usage="usage: make-deb.sh [--root ROOTDIR] DLDIR PATCHDIR OUTDIR
  DLDIR holds the verified orig and Debian tarballs (make base); the .debs,
  .buildinfo and .changes replace OUTDIR's contents only when the build
  succeeded, with the build log (OUTDIR/build.log). The work tree is
  OUTDIR.work/, removed after a success and kept after a failure.
  --root ROOTDIR  build in that Debian root (scripts/debian-root.sh) for
                  its release, with its debhelper and libraries; the work
                  tree is then ROOTDIR/steady-deb.work/.
  When Debian versions of the package that sort above the fork's are in
  the build environment's apt index, OUTDIR/unbound-steady.pref is an apt
  preferences file that holds exactly those back (doc/operators.md: Installing).
  environment:
  JOBS          parallel jobs (default: number of CPUs)
  DEBFULLNAME, DEBEMAIL  changelog signer (default: the last patch's author)"

set -eu
root=""
if [ "${1:-}" = --root ]; then
	[ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
	root=$(cd "$2" && pwd) || exit 2
	shift 2
fi
[ $# -eq 3 ] || { echo "$usage" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/pin.sh"
pin_load
dl=$(cd "$1" && pwd) pdir=$(cd "$2" && pwd)
mkdir -p "$3"
out=$(cd "$3" && pwd)
die() { echo "make-deb: error: $*" >&2; exit 1; }
# in_build DIR CMD...: run CMD in DIR of the build environment: this
# machine, or the root (DIR is then a path inside it).
if [ -n "$root" ]; then
	[ -f "$root/etc/os-release" ] || die "$root has no etc/os-release (make it with scripts/debian-root.sh)"
	work=$root/steady-deb.work
	inwork=/steady-deb.work
	in_build() { d=$1; shift; "$here/in-root.sh" "$root" sh -c 'cd "$1" && shift && exec "$@"' sh "$d" "$@"; }
else
	work=$out.work
	inwork=$work
	in_build() { d=$1; shift; (cd "$d" && "$@"); }
fi
# The release the packages are built for: its os-release.
osrelease=$root/etc/os-release
os_field() { (. "$osrelease" 2>/dev/null && eval "echo \"\${$1:-}\""); }

# The pinned Debian tarball, or the revision fetch-base.sh fell back to.
debtar=$dl/$BASE_DEBIAN_FILE
[ -f "$debtar" ] || debtar=$(ls "$dl"/"${BASE_PACKAGE}_$BASE_UPSTREAM_VERSION"-*.debian.tar.xz 2>/dev/null | sort -V | tail -n 1)
[ -f "$debtar" ] || die "no Debian tarball in $dl (run make base)"
[ -f "$dl/$BASE_ORIG_FILE" ] || die "no $BASE_ORIG_FILE in $dl (run make base)"

rm -rf "$work"
mkdir -p "$work"
tree=$work/$BASE_PACKAGE-$BASE_UPSTREAM_VERSION
intree=$inwork/$BASE_PACKAGE-$BASE_UPSTREAM_VERSION
mkdir "$tree"
tar -xzf "$dl/$BASE_ORIG_FILE" -C "$tree" --strip-components=1
tar -xJf "$debtar" -C "$tree"
cp "$dl/$BASE_ORIG_FILE" "$work/${BASE_PACKAGE}_$BASE_UPSTREAM_VERSION.orig.tar.gz"

# Our patches go after Debian's, in their own directory; dpkg-source
# applies the whole series (without fuzz) before the build. The series is
# copied first, so patches/ may change while the build runs.
mkdir "$tree/debian/patches/steady"
[ -z "$(tail -c 1 "$tree/debian/patches/series")" ] || echo >> "$tree/debian/patches/series"
n=0 list=""
names=$("$here/series.sh" "$pdir") || exit 1
for p in $names; do
	cp "$pdir/$p" "$tree/debian/patches/steady/$p"
	echo "steady/$p" >> "$tree/debian/patches/series"
	n=$((n + 1)) list="$list $p"
done
last=$(echo "$list" | awk '{ print $NF }')

# The Debian revision the tree really is (the pinned one, or the one
# fetch-base.sh fell back to).
debver=$(cd "$tree" && dpkg-parsechangelog -S Version)

# unbound -V shows the patch level, the base and its security status (as
# base.pin gives it); debian/rules passes dpkg-buildflags' CPPFLAGS (with
# this append) to both configure runs.
cppflags="-DSTEADY_PATCHLEVEL=$n -DSTEADY_BASE=$debver $(pin_cve_cppflags)"
sed -i "/^export DEB_CFLAGS_MAINT_APPEND/a\\
# Unbound Steady: unbound -V prints the fork's patch level and base.\\
export DEB_CPPFLAGS_MAINT_APPEND = $cppflags" "$tree/debian/rules"
grep -qF "export DEB_CPPFLAGS_MAINT_APPEND = $cppflags" "$tree/debian/rules" ||
	die "could not add -DSTEADY_PATCHLEVEL to debian/rules (DEB_CFLAGS_MAINT_APPEND line gone?)"

# The package's system account: Debian's debian/unbound.sysusers (since
# 1.25.0-1) may use the "u!" line of systemd 256 (a locked account).
# Debian 12's systemd-sysusers (252) refuses that line, and the package's
# postinst fails; there "u" makes the same account, which sysusers of
# 252 creates with the locked password "!*" too.
sysusers_note=""
osmajor=$(os_field VERSION_ID | cut -d. -f1)
if [ -f "$tree/debian/unbound.sysusers" ] && grep -q '^u!' "$tree/debian/unbound.sysusers" &&
	[ -n "$osmajor" ] && [ "$osmajor" -lt 13 ] 2>/dev/null; then
	sed -i 's/^u!/u/' "$tree/debian/unbound.sysusers"
	sysusers_note="debian/unbound.sysusers: \"u\" instead of \"u!\", which Debian $osmajor's systemd-sysusers does not know."
fi

# The version (scripts/deb-version.sh): above Debian's, below Debian's
# next security revision and later releases, growing with every
# committed change of the series, naming the Debian release it is built
# on. The changelog entry names the fork; its date and signer come from
# the series' last patch, so the same series gives the same changelog.
version=$(STEADY_OS_RELEASE=$(os_field VERSION_ID) "$here/deb-version.sh" "$debver")
codename=$(os_field VERSION_CODENAME)
codename=${codename:-unstable}
if [ -n "$last" ]; then
	date=$(sed -n 's/^Date: //p' "$tree/debian/patches/steady/$last" | head -n 1)
	author=$(awk '/^From: / { a = substr($0, 7); getline;
		if ($0 ~ /^[ \t]/) { sub(/^[ \t]+/, " "); a = a $0 }; print a; exit }' "$tree/debian/patches/steady/$last")
fi
[ -n "${date:-}" ] || date=$(date -R)
author=${author:-Unbound Steady maintainers <unbound-steady@localhost>}
[ -z "${DEBFULLNAME:-}" ] || [ -z "${DEBEMAIL:-}" ] || author="$DEBFULLNAME <$DEBEMAIL>"
{
	echo "$BASE_PACKAGE ($version) $codename; urgency=medium"
	echo
	echo "  * Unbound Steady, a downstream fork of Unbound: Debian's packaging of"
	echo "    $debver with the fork's $n patch(es) appended to the quilt"
	echo "    series, in debian/patches/steady/:"
	for p in $list; do echo "    - $p"; done
	echo "  * debian/rules: $cppflags,"
	echo "    so unbound -V names the fork, its base and its security status."
	echo "  * Built on $(os_field PRETTY_NAME) with its debhelper and libraries."
	[ -z "$sysusers_note" ] || echo "  * $sysusers_note"
	echo "  * debian/unbound.preinst, debian/unbound.prerm: a notice when the fork"
	echo "    replaces a newer Debian unbound, and when a Debian unbound replaces"
	echo "    the fork."
	echo
	echo " -- $author  $date"
	echo
	cat "$tree/debian/changelog"
} > "$work/changelog"
mv "$work/changelog" "$tree/debian/changelog"
[ "$(cd "$tree" && dpkg-parsechangelog -S Version)" = "$version" ] ||
	die "debian/changelog did not take the new version $version"

# The fork's cache-hash patch compiles XXH3 from xxHash's header into
# unbound and libunbound8; Debian's packaging does not know it yet. The
# package must have it, not fall back to lookup3 where the header is
# missing (--with-xxhash fails configure then); 0.8.0 is the first
# release whose XXH3 is stable. The code is xxHash's, so the two
# packages name the xxhash source they were built with (Built-Using,
# filled in at build time: a security fix of xxHash then rebuilds the
# fork too) and debian/copyright has its licence.
grep -q libxxhash-dev "$tree/debian/control" ||
	sed -i 's/^Build-Depends:/Build-Depends: libxxhash-dev (>= 0.8.0),/' "$tree/debian/control"
grep -q '^CONFIGURE_ARGS += --with-xxhash$' "$tree/debian/rules" ||
	sed -i '/^CONFIGURE_ARGS += --with-rootkey-file=/a\
# Unbound Steady: XXH3 for the cache hash (cache-hash: xxh3), see debian/control.\
CONFIGURE_ARGS += --with-xxhash' "$tree/debian/rules"
grep -q '^CONFIGURE_ARGS += --with-xxhash$' "$tree/debian/rules" ||
	die "could not add --with-xxhash to debian/rules (CONFIGURE_ARGS += --with-rootkey-file line gone?)"
for p in unbound libunbound8; do
	sed -i "/^Package: $p\$/a\\
Built-Using: \${steady:Built-Using}" "$tree/debian/control"
	grep -A1 "^Package: $p\$" "$tree/debian/control" | grep -q '^Built-Using: ${steady:Built-Using}$' ||
		die "could not add Built-Using to package $p in debian/control"
done
grep -q '^override_dh_gencontrol:' "$tree/debian/rules" &&
	die "Debian's debian/rules has its own override_dh_gencontrol now: add the steady:Built-Using substitution to it"
cat >> "$tree/debian/rules" <<'RULES'

# Unbound Steady: the xxhash source whose header unbound and libunbound8
# are built with.
override_dh_gencontrol:
	dh_gencontrol -- -Vsteady:Built-Using="$(shell dpkg-query -W -f='$${source:Package} (= $${source:Version})' libxxhash-dev)"
RULES
cat >> "$tree/debian/copyright" <<'COPYRIGHT'

Files: debian/xxhash.h
Copyright: 2012-2021 Yann Collet
License: BSD-2-clause-xxHash
Comment: Not a file of this source: XXH3 of xxHash is compiled into
 unbound and libunbound8 from the header of libxxhash-dev (their
 Built-Using field names its source and version), for the cache hash
 that the Unbound Steady patches add (cache-hash: xxh3).

License: BSD-2-clause-xxHash
 Redistribution and use in source and binary forms, with or without modification,
 are permitted provided that the following conditions are met:
 .
 * Redistributions of source code must retain the above copyright notice, this
   list of conditions and the following disclaimer.
 .
 * Redistributions in binary form must reproduce the above copyright notice, this
   list of conditions and the following disclaimer in the documentation and/or
   other materials provided with the distribution.
 .
 THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS" AND
 ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED
 WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE
 DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR CONTRIBUTORS BE LIABLE FOR
 ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL DAMAGES
 (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR SERVICES;
 LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED AND ON
 ANY THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY, OR TORT
 (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE OF THIS
 SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
COPYRIGHT

# The fork is never replaced, nor installed over a newer Debian version,
# without a notice: conf/deb/unbound.preinst and unbound.prerm, with the
# version and base filled in (debhelper adds its own parts at #DEBHELPER#).
for s in preinst prerm; do
	[ ! -e "$tree/debian/unbound.$s" ] ||
		die "Debian's packaging has its own debian/unbound.$s now: merge conf/deb/unbound.$s into it"
	sed -e "s/@STEADY_VERSION@/$version/g" -e "s/@STEADY_BASE@/$debver/g" \
		"$here/../conf/deb/unbound.$s" > "$tree/debian/unbound.$s"
	grep -q '^#DEBHELPER#$' "$tree/debian/unbound.$s" || die "conf/deb/unbound.$s has no #DEBHELPER# line"
done

# A root's apt index is brought up to date before every build: the
# build-dependencies and the preferences file below come from it. This
# machine's own index is left as it is.
if [ -n "$root" ]; then
	in_build / apt-get update -q > "$work/apt.log" 2>&1 || {
		tail -n 20 "$work/apt.log" >&2
		die "apt-get update failed in $root (log: $work/apt.log)"
	}
fi
# Build-dependencies from the release built for; every one of them is in
# Debian 12 and 13 (see doc/operators.md), so none of the package's features is
# dropped.
if ! in_build "$intree" dpkg-checkbuilddeps 2>"$work/builddeps.txt"; then
	[ "$(id -u)" = 0 ] || die "$(cat "$work/builddeps.txt")
  run as root, or: apt-get build-dep $tree"
	echo "make-deb: installing build-dependencies with apt-get build-dep"
	in_build / env DEBIAN_FRONTEND=noninteractive apt-get build-dep -y -q \
		--no-install-recommends "$intree" >> "$work/apt.log" 2>&1 || {
		tail -n 20 "$work/apt.log" >&2
		die "could not install the build-dependencies (log: $work/apt.log)"
	}
fi

# Tests are skipped here (nocheck): make test and make check-series run
# upstream's test suite on the same sources.
jobs=${JOBS:-$(nproc)}
# The package is built with the release's own tools and Python: the
# system's PATH, not the caller's, where a python3 of pyenv (say) comes
# first and configure would compile the Python module against its
# headers and libpython. On this machine ccache, when installed, as
# build.sh uses it: a build of the same series in another clone (CI's)
# takes its objects from the cache (dpkg-buildflags' -ffile-prefix-map
# names the work tree, which ccache leaves out of the key).
syspath=/usr/sbin:/usr/bin:/sbin:/bin
if [ -z "$root" ]; then
	. "$here/ccache.sh"
	CCACHE_BASEDIR=$work
	ccache_use "$work"
	case ":$PATH:" in *:/usr/lib/ccache:*) syspath=/usr/lib/ccache:$syspath ;; esac
fi
echo "make-deb: building $BASE_PACKAGE $version (log: $work/build.log)"
in_build "$intree" env PATH="$syspath" DEB_BUILD_OPTIONS="nocheck parallel=$jobs" \
	dpkg-buildpackage -b -us -uc > "$work/build.log" 2>&1 || {
	if grep -q '^dpkg-source: error' "$work/build.log"; then
		# dpkg-source names each patch before it applies it.
		bad=$(sed -n 's/^dpkg-source: info: applying //p' "$work/build.log" | tail -n 1)
		grep -E 'FAILED|^patching file|No file to patch' "$work/build.log" | tail -n 10 >&2
		die "patch $bad does not apply on top of Debian's series (dpkg-source allows no fuzz; full log: $work/build.log)"
	fi
	grep -E 'error|Error' "$work/build.log" | tail -n 30 >&2
	die "dpkg-buildpackage failed (full log: $work/build.log)"
}

ls "$work"/*.deb >/dev/null 2>&1 || die "dpkg-buildpackage made no .deb"

# The apt preferences file: the Debian versions of the package in the
# build environment's index that sort above the fork (trixie's newer
# point release, say). Installing the fork over one of them is the
# operator's choice; the file keeps apt from undoing it at the next
# upgrade, at priority 1, so those versions are still installed where
# no unbound is. A Debian version that is not in it and sorts above
# the fork, the next security fix say, still replaces the fork (and the
# prerm says so).
above=$(in_build / apt-cache madison "$BASE_PACKAGE" 2>/dev/null | awk -F'|' '{ gsub(/ /, "", $2); print $2 }' |
	sort -u | while read -r v; do
		case $v in *+steady*) continue ;; esac
		! dpkg --compare-versions "$v" gt "$version" || echo "$v"
	done)
rm -f "$work/unbound-steady.pref"
if [ -n "$above" ]; then
	binpkgs=$(cd "$work" && ls *.deb | sed -n 's/_.*//p' | grep -v -- '-dbgsym$' | sort -u | tr '\n' ' ' | sed 's/ $//')
	{
		echo "# Unbound Steady $version: install as /etc/apt/preferences.d/unbound-steady"
		echo "# to keep the fork installed over Debian's versions that sort above it"
		echo "# and that were in $(os_field PRETTY_NAME)'s index when it was built."
		echo "# A Debian version not named here that sorts above the fork, a new"
		echo "# security fix say, replaces it at the next upgrade (doc/operators.md: Installing)."
		for v in $above; do
			echo
			echo "Explanation: the fork $version is installed instead of Debian's $v"
			echo "Package: $binpkgs"
			echo "Pin: version $v"
			echo "Pin-Priority: 1"
		done
	} > "$work/unbound-steady.pref"
fi

# Replace OUTDIR's files only now, so it never mixes two versions.
rm -f "$out"/*.deb "$out"/*.buildinfo "$out"/*.changes "$out"/build.log "$out"/PATCHLEVEL "$out"/unbound-steady.pref "$out"/control
mv "$work"/*.deb "$work"/*.buildinfo "$work"/*.changes "$work/build.log" "$out"/
[ ! -f "$work/unbound-steady.pref" ] || mv "$work/unbound-steady.pref" "$out"/
echo "$version" > "$out/VERSION"
echo "$n" > "$out/PATCHLEVEL"
# the packaging's control file as built, for the deb test
cp "$tree/debian/control" "$out/control"
rm -rf "$work"
echo "make-deb: $BASE_PACKAGE $version in $out:"
(cd "$out" && ls *.deb | sed 's/^/  /')
[ ! -f "$out/unbound-steady.pref" ] ||
	echo "  unbound-steady.pref (apt preferences: keeps the fork over Debian's$(echo "$above" | tr '\n' ' ' | sed 's/^/ /; s/ $//'))"
