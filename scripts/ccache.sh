#!/bin/sh
# Shared helper for the scripts that compile Unbound (build.sh):
# compile through ccache when it is installed, so that a build of a tree
# already compiled once on this machine (another clone, a clean build/,
# CI) takes its objects from the cache. Source it, then call:
#   . "$here/ccache.sh"; ccache_use TOPDIR
# CCACHE_DISABLE=1 builds without it; CCACHE_DIR (default: ccache's own,
# in the user's home) and CCACHE_BASEDIR (default: TOPDIR, the
# repository's top, so that clones at other paths share the cache) may be
# set by the caller.
ccache_use() {
	[ -z "${CCACHE_DISABLE:-}" ] || return 0
	# Debian's ccache package: gcc, cc and clang names that call ccache.
	[ -d /usr/lib/ccache ] && command -v ccache >/dev/null 2>&1 || return 0
	case ":$PATH:" in *:/usr/lib/ccache:*) ;; *) PATH=/usr/lib/ccache:$PATH ;; esac
	CCACHE_BASEDIR=${CCACHE_BASEDIR:-$1}
	# the build directory's absolute path is not part of an object's key
	CCACHE_NOHASHDIR=1
	export PATH CCACHE_BASEDIR CCACHE_NOHASHDIR
}
