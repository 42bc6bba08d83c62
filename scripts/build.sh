#!/bin/sh
# Configure (when the options changed) and build an Unbound source tree out
# of tree, with the configure options of Debian's own package.
usage="usage: build.sh SRCDIR BUILDDIR
  environment:
  PREFIX           installation prefix (default /usr/local)
  CONFIGURE_FLAGS  extra ./configure options, appended last so they win
  STEADY_PATCHLEVEL  fork patch level shown by unbound -V (fork builds; these
                   also get the base and its unfixed CVE count from base.pin)
  EXTRA_CFLAGS     appended to Debian's CFLAGS (e.g. sanitizers)
  JOBS             parallel make jobs (default: number of CPUs)
  FLEX, BISON      the names checked for the lexer and parser generators
                   (default flex, bison); configure picks what it runs
  STEADY_TIMES     a file to append this build's times to, a line
                   \"BUILDDIR START END CONFIGURE_SECONDS MAKE_SECONDS\"
                   (make test's closing report reads it)"

set -eu
[ $# -eq 2 ] || { echo "$usage" >&2; exit 2; }
src=$(cd "$1" && pwd)
mkdir -p "$2"
bld=$(cd "$2" && pwd)
die() { echo "build: error: $*" >&2; exit 1; }
[ -x "$src/configure" ] || die "$src has no configure script"
# The lexer and parser of the config file are generated from the tree's
# configlexer.lex and configparser.y (below), which the patches change:
# without flex and bison, make would compile the tarball's old ones,
# which do not know the fork's options. FLEX and BISON change the names
# checked (the test of this check uses names that do not exist).
for tool in "${FLEX:-flex}" "${BISON:-bison}"; do
	command -v "$tool" >/dev/null 2>&1 || die "$tool is not installed; it generates the config file parser from util/configlexer.lex and util/configparser.y (apt-get install flex bison, or scripts/install-deps.sh)"
done

# Debian's daemon build (debian/rules, first build), with the machine's
# Debian build flags. The paths an operator's config and scripts rely on
# (/etc/unbound, /run/unbound.pid, the root key) are Debian's whatever the
# PREFIX, so an installed fork reads the same files as the package.
prefix=${PREFIX:-/usr/local}
set -- --prefix="$prefix" --sysconfdir=/etc --localstatedir=/var \
	--runstatedir=/run \
	--with-pythonmodule --with-pyunbound \
	--enable-subnet --enable-dnstap --enable-systemd \
	--enable-cachedb --with-libhiredis --with-libnghttp2 \
	--with-chroot-dir= --with-dnstap-socket-path=/run/dnstap.sock \
	--disable-rpath --with-pidfile=/run/unbound.pid --with-libevent \
	--enable-tfo-client --with-rootkey-file=/usr/share/dns/root.key \
	--enable-tfo-server
# CONFIGURE_FLAGS is shell words, quoting allowed (./configure writes it so).
eval "set -- \"\$@\" ${CONFIGURE_FLAGS:-}"

if command -v dpkg-buildflags >/dev/null; then
	# Without fixfilepath and fixdebugpath: their -f*-prefix-map options
	# name the directory build.sh runs in, so every compile command would
	# differ between clones and ccache (below) could not share objects;
	# ccache gives the compiler paths relative to the repository instead.
	export DEB_BUILD_MAINT_OPTIONS="hardening=+all reproducible=-fixfilepath,-fixdebugpath"
	CFLAGS=$(dpkg-buildflags --get CFLAGS)
	CPPFLAGS=$(dpkg-buildflags --get CPPFLAGS)
	LDFLAGS=$(dpkg-buildflags --get LDFLAGS)
else
	CFLAGS="-g -O2" CPPFLAGS="" LDFLAGS=""
fi
CFLAGS="$CFLAGS ${EXTRA_CFLAGS:-}"
LDFLAGS="$LDFLAGS ${EXTRA_LDFLAGS:-}"
# Fork builds: unbound -V names the patch level, and the base and its
# security status as base.pin gives them.
if [ -n "${STEADY_PATCHLEVEL:-}" ]; then
	. "$(dirname "$0")/pin.sh"
	pin_load || die "cannot read the base's identity"
	CPPFLAGS="$CPPFLAGS -DSTEADY_PATCHLEVEL=$STEADY_PATCHLEVEL $(pin_cppflags)"
fi
export CFLAGS CPPFLAGS LDFLAGS
# Debian's own Python for the Python module, not another python3 that may
# come first on PATH.
if [ -z "${PYTHON:-}" ] && [ -x /usr/bin/python3 ]; then
	PYTHON=/usr/bin/python3
	export PYTHON
fi
# Python's module directory as Debian sets it, so install stays in PREFIX.
PYTHON_SITE_PKG=${PYTHON_SITE_PKG:-$prefix/lib/python3/dist-packages}
export PYTHON_SITE_PKG

# Every variant of make test compiles the same tree: a clean clone on
# the same machine takes the objects from ccache.
. "$(dirname "$0")/ccache.sh"
ccache_use "$(cd "$(dirname "$0")/.." && pwd)"

cd "$bld"
# make test runs two builds at a time under its own make: this build's
# makes take JOBS, not the parent's job server (whose file descriptors
# they do not get)
unset MAKEFLAGS MFLAGS
t_start=$(date +%s)
# configure runs again when its options, the configure script or
# Makefile.in change (a patch may change configure, or add a source file
# to Makefile.in, which the Makefile made from the old one would not
# compile or link).
want=$(printf '%s\n' "$src" "$@" "$CFLAGS" "$CPPFLAGS" "$LDFLAGS" "$PYTHON_SITE_PKG" "${PYTHON:-}" "$(sha256sum < "$src/configure")" "$(sha256sum < "$src/Makefile.in")")
if [ ! -f Makefile ] || [ "$(cat .configure-args 2>/dev/null)" != "$want" ]; then
	# Objects of other flags (-DSTEADY_PATCHLEVEL, sanitizers) are not
	# rebuilt by make when configure leaves config.h as it was: remove
	# them (ccache makes the rebuild cheap).
	[ ! -f Makefile ] || make clean > /dev/null 2>&1 || true
	rm -f .parser-stamp
	rm -f .configure-args
	"$src/configure" "$@" > configure.log 2>&1 || {
		tail -n 30 configure.log >&2
		die "configure failed in $bld (full log: $bld/configure.log)"
	}
	printf '%s\n' "$want" > .configure-args
fi

# The tarball ships a pre-generated lexer and parser; patches change only
# configlexer.lex and configparser.y, so generate both here from the tree's
# sources whenever those change, whatever the file dates say.
gen=$(cat "$src/util/configlexer.lex" "$src/util/configparser.y" | sha256sum)
if [ "$(cat .parser-stamp 2>/dev/null)" != "$gen" ]; then
	mkdir -p util
	rm -f util/configlexer.c util/configparser.c util/configparser.h
	make -W "$src/util/configparser.y" util/configparser.c >/dev/null
	make -W "$src/util/configlexer.lex" util/configlexer.c >/dev/null
	echo "$gen" > .parser-stamp
fi
t_make=$(date +%s)
make -j"${JOBS:-$(nproc)}" > make.log 2>&1 || {
	grep -E 'error|Error' make.log | head -n 30 >&2
	die "make failed in $bld (full log: $bld/make.log)"
}
t_end=$(date +%s)
[ -z "${STEADY_TIMES:-}" ] ||
	echo "$bld $t_start $t_end $((t_make - t_start)) $((t_end - t_make))" >> "$STEADY_TIMES"
