#!/bin/sh
# Run a command in a root directory made by debian-root.sh, in private
# mount and PID namespaces: /proc, /dev and the machine's resolv.conf are
# mounted there for the command only, and every process it leaves is
# killed with it when it ends.
usage="usage: in-root.sh [--net] ROOTDIR COMMAND [ARG...]
  --net   a network namespace of its own, with only loopback (up): the
          command reaches nothing outside, and its ports cannot clash
          with the machine's.
  COMMAND runs as root with a clean environment (PATH, HOME, LANG=C.UTF-8,
  DEBIAN_FRONTEND=noninteractive, and TERM). Needs root."

set -eu
net=""
[ "${1:-}" != --net ] || { net=--net; shift; }
[ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
root=$(cd "$1" && pwd) || exit 2
shift
[ "$(id -u)" = 0 ] || { echo "in-root: error: needs root" >&2; exit 1; }
[ -x "$root/bin/sh" ] || { echo "in-root: error: $root is not a root directory" >&2; exit 1; }

# The inner shell mounts in the new namespace; the mounts go with it.
# shellcheck disable=SC2016
exec unshare --mount --pid --fork --kill-child $net sh -c '
	set -e
	root=$1; shift
	mount -t proc proc "$root/proc"
	mount --rbind /dev "$root/dev"
	if [ -f /etc/resolv.conf ] && [ -f "$root/etc/resolv.conf" ]; then
		mount --bind /etc/resolv.conf "$root/etc/resolv.conf"
	fi
	if [ -n "'"$net"'" ]; then
		ip link set lo up
	fi
	exec chroot "$root" /usr/bin/env -i \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive TERM="${TERM:-dumb}" "$@"
' in-root "$root" "$@"
