#!/bin/sh
# usage: bench/renice-io-thread.sh PATTERN NICE SECONDS
# For SECONDS, renice to NICE the auth-zone I/O thread of each unbound
# whose command line contains PATTERN: the thread other than the main one
# found waiting in poll (its command pipe) or on a futex in three samples
# in a row; the workers wait in epoll (wchan do_epoll_wait). An experiment
# for doc/rpz-scale.md (item 4: the I/O thread at a lower priority), run
# beside bench/rpz_scale.py.
[ $# -eq 3 ] || { sed -n 2p "$0" >&2; exit 2; }
pattern=$1 nice=$2 end=$(( $(date +%s) + $3 ))
state=$(mktemp -d) || exit 1
trap 'rm -rf "$state"' EXIT
trap 'exit 1' INT TERM
while [ "$(date +%s)" -lt "$end" ]; do
	for pid in $(pgrep -f "unbound -d -c .*$pattern"); do
		for t in /proc/"$pid"/task/*; do
			tid=${t##*/}
			[ "$tid" != "$pid" ] || continue
			case $(cat "$t/wchan" 2>/dev/null) in
			*poll_schedule*|*futex*) n=$(( $(cat "$state/$tid" 2>/dev/null || echo 0) + 1 ));;
			*) n=0;;
			esac
			echo $n > "$state/$tid"
			# field 19 of stat is the nice value (comm is "unbound")
			if [ "$n" -eq 3 ] && [ "$(awk '{print $19}' "$t/stat")" != "$nice" ]; then
				renice -n "$nice" -p "$tid" >/dev/null &&
					echo "$(date +%T) pid $pid thread $tid: nice $nice"
			fi
		done
	done
	sleep 1
done
