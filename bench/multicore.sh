#!/bin/sh
# The multicore benchmark of Unbound Steady: stock Unbound and the fork,
# side by side, from 1 thread up to half the CPUs, with the load
# generator pinned to the other half. It is the run script of the
# portable bundle (make bench-bundle, scripts/bench-bundle.sh): every
# program it starts comes from the bundle, through the bundle's own
# dynamic loader and libraries, and every tool it uses is the bundle's
# busybox, so a machine with nothing but a Linux kernel (x86-64) runs it.
usage="usage: bin/busybox sh run.sh [--quick] [--reps N] [--seconds S]
         [--threads T,T,...] [--miss-rate Q] [--keys N]
         [--parts table,floor,hits,misses] [--out FILE]
  In the bundle's directory (or anywhere: it finds the bundle from its
  own path). Parts, each for T = 1, 2, 4, ... up to half the CPUs:
    table   lruhash_bench lookup: N keys, T threads, lookups/s; and growth
            to 4N keys with a reader (T = 1): the reader's longest wait
    floor   bench/udpfloor.c, a responder that only sets the QR bit:
            answers per CPU-second of the responder (the kernel's cost);
            again with recvmmsg batches of up to 32 queries (-b 32)
    hits    1000 warm names: answers per CPU-second of unbound, and qps
    misses  unique names under the zone's wildcard at a fixed rate
            (Q x T per second): unbound's CPU microseconds per answer
  --parts runs only those (default: all; the floor goes with the hits
  in the report). Stock and fork alternate, REPS runs each (default 5;
  --quick: 1 run of 2 s with small sizes, a smoke check whose figures
  are not results).
  Writes a Markdown report to FILE (default: report-HOST-DATE.md here)
  and to standard output. Needs no root; uses loopback ports 20000+."

set -eu
B=$(cd "$(dirname "$0")" && pwd)
# The bundle's busybox provides every tool, ahead of anything the
# machine has (it may have nothing).
tools=$B/.tools
if [ ! -x "$tools/awk" ]; then
	mkdir -p "$tools"
	"$B/bin/busybox" --install -s "$tools"
fi
PATH=$tools
export PATH

args="$*"
reps=5 seconds=10 threads="" miss_rate=3000 keys=1000000 out="" quick=0
parts="table floor hits misses"
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1 reps=1 seconds=2 keys=100000 ;;
	--reps) reps=$2; shift ;;
	--seconds) seconds=$2; shift ;;
	--threads) threads=$(echo "$2" | tr ',' ' '); shift ;;
	--miss-rate) miss_rate=$2; shift ;;
	--keys) keys=$2; shift ;;
	--parts) parts=$(echo "$2" | tr ',' ' '); shift ;;
	--out) out=$2; shift ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
	shift
done
for part in $parts; do
	case $part in
	table|floor|hits|misses) ;;
	*) echo "run.sh: no part $part" >&2; echo "$usage" >&2; exit 2 ;;
	esac
done
# want PART: whether this run measures PART
want() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
ld=$B/lib/ld-linux-x86-64.so.2
[ -x "$ld" ] || { echo "run.sh: $ld is missing: not a bench bundle?" >&2; exit 1; }

ncpu=$(nproc)
half=$((ncpu / 2))
[ $half -ge 1 ] || half=1
if [ -z "$threads" ]; then
	t=1
	while [ $t -le $half ]; do threads="$threads $t"; t=$((t * 2)); done
fi
# The generator (dnsperf) runs on the upper half of the CPUs; on one CPU
# it shares it with the server.
gen_first=$half
[ $ncpu -gt 1 ] || gen_first=0
gen_threads=$((ncpu - gen_first))
host=$(hostname 2>/dev/null || echo host)
stamp=$(date -u +%Y%m%dT%H%M%SZ)
[ -n "$out" ] || out=$B/report-$host-$stamp.md
work=$(mktemp -d "${TMPDIR:-/tmp}/steady-multicore.XXXXXX")
pids=""
cleanup() {
	for p in $pids; do kill -9 "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# cpus FIRST LAST: the CPU list FIRST..LAST, for taskset -c
cpus() { echo "$1-$2"; }
# run CPUS PROG ARGS...: a bundle program on those CPUs, in the foreground
run() { m=$1 p=$2; shift 2; taskset -c "$m" "$ld" --library-path "$B/lib" "$B/bin/$p" "$@"; }
# start CPUS PROG ARGS...: the same in the background; its PID in $pid
start() { m=$1 p=$2; shift 2; (exec taskset -c "$m" "$ld" --library-path "$B/lib" "$B/bin/$p" "$@") & pid=$!; pids="$pids $pid"; }
# stop PID: kill it, wait for it, and forget it, so that cleanup never
# kills a PID the system has given to another process since
stop() {
	kill -9 "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
	pids=$(echo "$pids" | tr ' ' '\n' | grep -vx "$1" | tr '\n' ' ')
}
# ticks PID: its user + system CPU time, in clock ticks (USER_HZ, 100 on Linux)
ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
# record KEY VALUE: one result of one run
record() { echo "$1 $2" >> "$work/results"; }
# dnsperf PORT FILE SECS [RATE]: the generator, on its CPUs; prints
# "completed qps"
dnsperf() {
	rate=""
	[ -z "${4:-}" ] || rate="-Q $4"
	# shellcheck disable=SC2086
	run "$(cpus $gen_first $((ncpu - 1)))" dnsperf -s 127.0.0.1 -p "$1" -d "$2" -l "$3" \
		-T "$gen_threads" -c $((gen_threads * 8)) -q $((gen_threads * 200)) -t 2 $rate > "$work/dnsperf.out" 2>&1 ||
		{ cat "$work/dnsperf.out" >&2; echo "run.sh: dnsperf failed" >&2; exit 1; }
	awk '/Queries completed:/ { c = $3 } /Queries per second:/ { q = $4 } END { printf "%d %.0f\n", c, q }' "$work/dnsperf.out"
}
# wait_port PORT: until something answers a DNS query on it
wait_port() {
	i=0
	while [ $i -lt 100 ]; do
		run "$(cpus 0 $((ncpu - 1)))" dnsperf -s 127.0.0.1 -p "$1" -d "$work/one.txt" -n 1 -t 1 > "$work/probe.out" 2>&1 || true
		grep -q 'Queries completed: *1 ' "$work/probe.out" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	echo "run.sh: nothing answers on port $1" >&2
	exit 1
}

# Query files: the warm names, a probe, and unique names for the misses.
echo "www.example.test A" > "$work/one.txt"
awk 'BEGIN { for (i = 0; i < 1000; i++) printf "h%d.example.test A\n", i }' > "$work/hit.txt"

# unbound_conf BUILD T PORT: the server's configuration, the demo's zone
# served to the iterator (for-upstream), so answers go through the caches
unbound_conf() {
	cat > "$work/$1.conf" <<EOF
server:
	interface: 127.0.0.1
	port: $3
	num-threads: $2
	so-reuseport: yes
	username: ""
	chroot: ""
	directory: "$work"
	pidfile: ""
	use-syslog: no
	logfile: "$work/$1.log"
	verbosity: 1
	do-ip6: no
	module-config: "iterator"
	local-zone: "test." nodefault
	msg-cache-size: 256m
	rrset-cache-size: 512m
	num-queries-per-thread: 4096
	access-control: 127.0.0.0/8 allow
auth-zone:
	name: "example.test."
	zonefile: "$B/data/example.test.zone"
	for-downstream: no
	for-upstream: yes
	fallback-enabled: no
EOF
}

port=20000
echo "run.sh: $ncpu CPUs; threads:$threads; generator on CPUs $gen_first-$((ncpu - 1)); $reps runs of $seconds s" >&2
for t in $threads; do
	scpus=$(cpus 0 $((t - 1)))
	r=1
	while [ $r -le $reps ]; do
		# table lookups, stock and fork, alternating
		if want table; then
			for b in stock fork; do
				v=$(run "$scpus" "lruhash_bench-$b" lookup "$keys" "$t" "$seconds" | sed -n 's/.*lookups_per_s=\([0-9.]*\).*/\1/p')
				record "table.$t.$b" "$v"
			done
		fi
		if want table && [ "$t" = 1 ]; then
			for b in stock fork; do
				v=$(run "$(cpus 0 $((ncpu > 1 ? 1 : 0)))" "lruhash_bench-$b" reader $((keys * 4)) |
					sed -n 's/.*reader_max_us=\([0-9.]*\).*/\1/p')
				record "grow.$t.$b" "$v"
			done
		fi
		# the floor: a recvfrom per query, and recvmmsg batches
		for f in floor floorb; do
			want floor || break
			port=$((port + 1))
			batch=""
			[ $f = floor ] || batch="-b 32"
			# shellcheck disable=SC2086
			start "$scpus" udpfloor -p "$port" -t "$t" $batch
			fpid=$pid
			wait_port "$port"
			before=$(ticks "$fpid")
			set -- $(dnsperf "$port" "$work/hit.txt" "$seconds") x
			after=$(ticks "$fpid")
			[ $# -eq 3 ] || exit 1
			stop "$fpid"
			record "$f.$t" "$(awk -v n="$1" -v d=$((after - before)) 'BEGIN { printf "%.0f", d ? n / (d / 100) : 0 }')"
			record "${f}qps.$t" "$2"
		done
		for b in stock fork; do
			want hits || want misses || break
			port=$((port + 1))
			unbound_conf "$b" "$t" "$port"
			start "$scpus" "unbound-$b" -d -c "$work/$b.conf"
			upid=$pid
			wait_port "$port"
			if want hits; then
				# cached answers
				dnsperf "$port" "$work/hit.txt" 2 > /dev/null
				before=$(ticks "$upid")
				set -- $(dnsperf "$port" "$work/hit.txt" "$seconds") x
				after=$(ticks "$upid")
				[ $# -eq 3 ] || exit 1
				record "hits.$t.$b" "$(awk -v n="$1" -v d=$((after - before)) 'BEGIN { printf "%.0f", d ? n / (d / 100) : 0 }')"
				record "hitqps.$t.$b" "$2"
			fi
			if want misses; then
				# cache misses at a fixed rate: names never asked before
				rate=$((miss_rate * t))
				awk -v n=$((rate * seconds * 2)) -v r="$r$b" 'BEGIN { for (i = 0; i < n; i++) printf "m%sx%d.example.test A\n", r, i }' > "$work/miss.txt"
				before=$(ticks "$upid")
				set -- $(dnsperf "$port" "$work/miss.txt" "$seconds" "$rate") x
				after=$(ticks "$upid")
				[ $# -eq 3 ] || exit 1
				record "miss.$t.$b" "$(awk -v n="$1" -v d=$((after - before)) 'BEGIN { printf "%.1f", n ? d * 10000 / n : 0 }')"
			fi
			stop "$upid"
		done
		r=$((r + 1))
	done
done

# median KEY: the median of the runs of KEY ("-" when none)
median() {
	awk -v k="$1" '$1 == k { print $2 }' "$work/results" | sort -n | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "-"; exit }
		print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
# stat KEY: "median [min-max]" of the runs of KEY
stat() {
	awk -v k="$1" -v m="$(median "$1")" '$1 == k { v = $2 + 0; if (n == 0 || v < lo) lo = v; if (n == 0 || v > hi) hi = v; n++ }
		END { if (n == 0) print "-"; else if (n == 1) print m; else printf "%s [%s-%s]\n", m, lo, hi }' "$work/results"
}
# ratio A B: A / B to 2 places
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 > 0 && a != "-") printf "%.2f", a / b; else print "-" }'; }
# stock_fork_rows PART: a row per thread count of PART's stock and fork
# figures and their ratio
stock_fork_rows() {
	echo "| threads | stock | fork | fork/stock |"
	echo "|---|---|---|---|"
	for t in $threads; do
		echo "| $t | $(stat "$1.$t.stock") | $(stat "$1.$t.fork") | $(ratio "$(median "$1.$t.fork")" "$(median "$1.$t.stock")") |"
	done
}

{
	echo "# Multicore benchmark: stock Unbound against Unbound Steady"
	echo
	[ $quick = 0 ] || { echo "**QUICK run: small sizes, one short run; the figures are not results.**"; echo; }
	echo "Command: \`bin/busybox sh run.sh${args:+ $args}\` (threads$threads, $reps runs of $seconds s, $keys keys, misses at $miss_rate x T per second)  "
	echo "Date: $(date -u '+%Y-%m-%d %H:%M UTC'); machine: $host, $ncpu CPUs ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)), kernel $(uname -r)  "
	echo "Builds: $(cat "$B/VERSIONS" 2>/dev/null | tr '\n' ';' | sed 's/;$//')  "
	echo "Server on CPUs 0..T-1; dnsperf (threads: $gen_threads) on CPUs $gen_first..$((ncpu - 1)); $reps runs of $seconds s per build and thread count, stock and fork alternating; median [min-max]."
	[ $ncpu -ge 4 ] || echo "With $ncpu CPUs only T = 1 fits with the generator on a CPU of its own; the many-core rows need a bigger machine."
	echo "Parts: $parts."
	if want table; then
		echo
		echo "## Table lookups ($keys keys), lookups/s"
		echo
		stock_fork_rows table
		echo
		echo "Growth to $((keys * 4)) keys with a reader (1 writer, 1 reader): the reader's longest wait, us: stock $(stat grow.1.stock), fork $(stat grow.1.fork)."
	fi
	if want floor || want hits; then
		echo
		echo "## Cached answers: answers per CPU-second of the server"
		echo
		echo "| threads | floor (QR flip) | stock | fork | fork/stock | fork/floor | stock/floor | qps: floor, stock, fork |"
		echo "|---|---|---|---|---|---|---|---|"
		for t in $threads; do
			flm=$(median "floor.$t") sm=$(median "hits.$t.stock") fm=$(median "hits.$t.fork")
			echo "| $t | $(stat "floor.$t") | $(stat "hits.$t.stock") | $(stat "hits.$t.fork") | $(ratio "$fm" "$sm") |" \
				"$(ratio "$fm" "$flm") | $(ratio "$sm" "$flm") | $(median "floorqps.$t"), $(median "hitqps.$t.stock"), $(median "hitqps.$t.fork") |"
		done
		echo
		echo "The floor with batched receives (udpfloor -b 32: recvmmsg of up to 32 queued queries, a sendto per answer), answers per CPU-second, and its ratio to the floor above:"
		for t in $threads; do
			echo "T = $t: $(stat "floorb.$t") ($(ratio "$(median "floorb.$t")" "$(median "floor.$t")"))."
		done
	fi
	if want misses; then
		echo
		echo "## Cache misses at $miss_rate x T queries/s: server CPU per answer, us (lower is better)"
		echo
		stock_fork_rows miss
	fi
} > "$work/report.md"
cp "$work/report.md" "$out"
cat "$out"
echo "run.sh: report in $out" >&2
