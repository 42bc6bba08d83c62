#!/bin/sh
# The Debian package version of the fork, built on Debian's DEBVER.
usage="usage: deb-version.sh DEBVER [REPO]
  Prints DEBVER+steadyC~debR, where
  C  the number of commits of REPO (default: this repository) that
     changed patches/ or base.pin: it grows with every change to the
     series or the base that is committed, and is the same for every
     rebuild of one commit. When patches/ or base.pin differ from the
     last commit, C is COUNT.YYYYMMDDHHMMSS (UTC build time): above the
     committed series, below the next commit. Without git history C is
     0.YYYYMMDDHHMMSS.
  R  the Debian release the package is built on (VERSION_ID of
     /etc/os-release, or \$STEADY_OS_RELEASE).
  So it sorts above Debian's DEBVER (an upgrade) and below Debian's next
  revision of the same upstream version (DEBVER with deb13u3 -> deb13u4)
  and any later upstream version, which carry security fixes."

set -eu
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "$usage" >&2; exit 2; }
debver=$1
repo=${2:-$(cd "$(dirname "$0")/.." && pwd)}
stamp=$(date -u +%Y%m%d%H%M%S)

if git -C "$repo" rev-parse --verify -q HEAD >/dev/null 2>&1; then
	count=$(git -C "$repo" rev-list --count HEAD -- patches base.pin)
	# Uncommitted or untracked changes to the series or the pin.
	if [ -n "$(git -C "$repo" status --porcelain -- patches base.pin)" ]; then
		count=$count.$stamp
	fi
else
	count=0.$stamp
fi

osrel=${STEADY_OS_RELEASE:-$(. /etc/os-release 2>/dev/null && echo "${VERSION_ID:-}")}
osrel=$(echo "$osrel" | sed 's/[^0-9.]//g')
[ -n "$osrel" ] || { echo "deb-version: error: cannot tell the Debian release (/etc/os-release VERSION_ID; set STEADY_OS_RELEASE)" >&2; exit 1; }
echo "$debver+steady$count~deb$osrel"
