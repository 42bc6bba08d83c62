#!/bin/sh
# Print a systemd drop-in for Debian's unbound.service that runs the
# fork installed under PREFIX (make install) instead of /usr/sbin/unbound.
# Only ExecStart changes: the unit's helpers (chroot setup, root trust
# anchor update with Debian's unbound-anchor), /etc/default/unbound, the
# notify type and reload by SIGHUP stay Debian's. make install-systemd
# writes it to /etc/systemd/system/unbound.service.d/unbound-steady.conf.
usage="usage: systemd-dropin.sh PREFIX"

set -eu
[ $# -eq 1 ] && [ -n "$1" ] || { echo "$usage" >&2; exit 2; }
case $1 in /*) ;; *) echo "systemd-dropin: PREFIX must be absolute: $1" >&2; exit 2 ;; esac
cat <<DROPIN
# Unbound Steady: run the fork from $1 with Debian's unit (written by
# make install-systemd). Back to Debian's /usr/sbin/unbound: remove this
# file, then systemctl daemon-reload && systemctl restart unbound.
[Service]
ExecStart=
ExecStart=$1/sbin/unbound -d -p \$DAEMON_OPTS
DROPIN
