#!/bin/sh
# Shared helpers for the scripts that read base.pin, the pinned base.
# Source it, then call the functions:
#   . "$here/pin.sh"; pin_load [PINFILE]
pin_usage="usage: . scripts/pin.sh; pin_load [PINFILE]; pin_id; pin_cppflags; pin_cve_cppflags
  PINFILE defaults to \$BASE_PIN, else base.pin next to scripts/."

# pin_load [PINFILE]: read the pin (shell KEY=value lines) into BASE_*
# variables; fails, naming the file, when a required key is missing.
pin_load() {
	PIN_FILE=${1:-${BASE_PIN:-$(cd "$(dirname "$0")/.." && pwd)/base.pin}}
	[ -r "$PIN_FILE" ] || { echo "pin: error: cannot read $PIN_FILE" >&2; return 1; }
	. "$PIN_FILE"
	for _v in BASE_PACKAGE BASE_UPSTREAM_VERSION BASE_DEBIAN_VERSION BASE_SUITE \
		BASE_ORIG_FILE BASE_ORIG_SHA256 BASE_DEBIAN_FILE BASE_DEBIAN_SHA256 \
		BASE_UNFIXED_CVES; do
		eval "[ -n \"\${$_v:-}\" ]" || { echo "pin: error: $PIN_FILE does not set $_v" >&2; return 1; }
	done
	# The version and the count go into C macros as bare tokens (-D,
	# stringified by daemon/unbound.c): only characters that survive that.
	case $BASE_DEBIAN_VERSION in
	*[!A-Za-z0-9.+~:-]*) echo "pin: error: BASE_DEBIAN_VERSION has characters a Debian version cannot have" >&2; return 1 ;;
	esac
	case $BASE_UNFIXED_CVES in
	*[!0-9]*) echo "pin: error: BASE_UNFIXED_CVES is not a number" >&2; return 1 ;;
	esac
	# optional, 0 when absent: how many of them the fork mitigates
	BASE_MITIGATED_CVES=${BASE_MITIGATED_CVES:-0}
	case $BASE_MITIGATED_CVES in
	*[!0-9]*) echo "pin: error: BASE_MITIGATED_CVES is not a number" >&2; return 1 ;;
	esac
	[ "$BASE_MITIGATED_CVES" -le "$BASE_UNFIXED_CVES" ] ||
		{ echo "pin: error: BASE_MITIGATED_CVES is more than BASE_UNFIXED_CVES" >&2; return 1; }
	BASE_OPEN_CVES=$((BASE_UNFIXED_CVES - BASE_MITIGATED_CVES))
	return 0
}

# pin_id: one line that changes whenever the base changes (its version,
# suite, file names or sums); make-src.sh keeps it with the work tree.
pin_id() {
	echo "$BASE_PACKAGE $BASE_DEBIAN_VERSION $BASE_SUITE $BASE_ORIG_FILE $BASE_ORIG_SHA256 $BASE_DEBIAN_FILE $BASE_DEBIAN_SHA256"
}

# pin_cppflags: the defines that make unbound -V name the base and its
# security status (patch 0001 prints them).
pin_cppflags() {
	echo "-DSTEADY_BASE=$BASE_DEBIAN_VERSION $(pin_cve_cppflags)"
}

# pin_cve_cppflags: the defines of the security status alone.
pin_cve_cppflags() {
	echo "-DSTEADY_UNFIXED_CVES=$BASE_UNFIXED_CVES -DSTEADY_OPEN_CVES=$BASE_OPEN_CVES -DSTEADY_MITIGATED_CVES=$BASE_MITIGATED_CVES"
}
