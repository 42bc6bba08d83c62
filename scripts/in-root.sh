#!/bin/sh
# Run a command in a root directory made by debian-root.sh, in private
# mount and PID namespaces: /proc, a /dev of its own (the usual device
# nodes, a new devpts instance; a socket made there, /dev/log say, stays
# in the root) and the machine's resolv.conf are mounted there for the
# command only, and every process it leaves is killed with it when it
# ends.
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
	mount -t tmpfs -o mode=755,nosuid tmpfs "$root/dev"
	for n in null zero full random urandom tty; do
		touch "$root/dev/$n"
		mount --bind "/dev/$n" "$root/dev/$n"
	done
	mkdir "$root/dev/pts" "$root/dev/shm"
	mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts "$root/dev/pts"
	ln -s pts/ptmx "$root/dev/ptmx"
	mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/dev/shm"
	ln -s /proc/self/fd "$root/dev/fd"
	ln -s /proc/self/fd/0 "$root/dev/stdin"
	ln -s /proc/self/fd/1 "$root/dev/stdout"
	ln -s /proc/self/fd/2 "$root/dev/stderr"
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
