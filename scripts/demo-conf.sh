#!/bin/sh
# Write the embedded default configuration (conf/demo.conf.in) and the demo
# zone into RUNDIR, for make run and the integration tests.
usage="usage: demo-conf.sh RUNDIR PORT [CONTROL_PORT]
  CONTROL_PORT defaults to PORT+1. Prints the config file's path."

set -eu
[ $# -ge 2 ] && [ $# -le 3 ] || { echo "$usage" >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
rundir=$(cd "$1" && pwd)
port=$2
cport=${3:-$((port + 1))}
cp "$here/conf/example.test.zone" "$rundir/example.test.zone"
sed -e "s|@RUNDIR@|$rundir|g" -e "s|@PORT@|$port|g" \
	-e "s|@CONTROL_PORT@|$cport|g" \
	-e "s|@ZONEFILE@|$rundir/example.test.zone|g" \
	"$here/conf/demo.conf.in" > "$rundir/unbound.conf"
echo "$rundir/unbound.conf"
