#!/bin/sh
# Run the built fork in the foreground on loopback with the embedded
# default configuration; Ctrl-C stops it.
usage="usage: run-demo.sh BUILDDIR RUNDIR [PORT]"

set -eu
[ $# -ge 2 ] && [ $# -le 3 ] || { echo "$usage" >&2; exit 2; }
bld=$(cd "$1" && pwd)
port=${3:-5353}
here=$(cd "$(dirname "$0")" && pwd)
conf=$("$here/demo-conf.sh" "$2" "$port")
# checkconf warns that the root stub's loopback address is never queried;
# that is the point (nothing leaves the machine), so show errors only.
"$bld/unbound-checkconf" "$conf" >/dev/null 2>&1 || "$bld/unbound-checkconf" "$conf"
cat <<MSG
Unbound Steady on 127.0.0.1 port $port (config: $conf). Try:
  dig @127.0.0.1 -p $port random-\$RANDOM.example.test A
  $bld/unbound-control -c $conf stats_noreset
Ctrl-C stops it.
MSG
exec "$bld/unbound" -d -c "$conf"
