#!/bin/sh
# Print the pinned base's identity (what make-src.sh keeps with a work tree
# and what makes make base fetch and unpack it again when it changes).
usage="usage: pin-id.sh [PINFILE]"
set -eu
[ $# -le 1 ] || { echo "$usage" >&2; exit 2; }
. "$(dirname "$0")/pin.sh"
pin_load "$@"
pin_id
