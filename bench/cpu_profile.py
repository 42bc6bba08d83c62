#!/usr/bin/env python3
"""Where a cached answer's (or a cache miss's) CPU goes, stock against
fork: each build is started on loopback with the demo configuration
(testcode/harness/server.py) pinned to CPUs 0..T-1, the 1000 names of
the hit benchmark are warmed, and perf record (cpu-clock samples, the
machines here have no hardware counters) samples the server while
dnsperf, pinned to the last CPU, asks the warm names as fast as it goes
(hits) or unique names under the zone's wildcard at a fixed rate
(misses). Samples are summed by symbol and put in groups by name
(kernel, event loop, parse, ACL, cache lookup and hash, locks, reply
encoding, statistics, cache insert, ...); the report has the groups'
shares and the top symbols of both builds.

usage: flock build/.bench.lock bench/cpu_profile.py [--stock build/stock]
       [--fork build/fork] [--threads 1] [--seconds 10] [--mode hits|misses]
       [--rate 3000] [--top 25] [--out FILE]"""

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "testcode"))
from harness.server import Unbound  # noqa: E402

EXTRA = "\tnum-threads: %d\n\tverbosity: 1\n\tso-reuseport: yes\n" \
        "\tmsg-cache-size: 256m\n\trrset-cache-size: 512m\n"

# (group, regular expression on the symbol), first match wins; "[k]"
# symbols are the kernel's.
GROUPS = [
    ("kernel (syscalls, UDP, scheduler)", r"^\[k\]"),
    ("statistics", r"server_stats|stats_|histogram|timehist"),
    ("locks", r"pthread_(rw|spin|mutex)|lock_|_lock$|rwlock|spin_"),
    ("hash (query, rrset, msg)", r"XXH|xxh|hashlittle|hash_|_hash\b|query_info_hash|dname_query_hash|msgreply_hash"),
    ("cache lookup", r"lruhash_lookup|slabhash_lookup|bin_find|msg_cache_lookup|rrset_cache_lookup|lru_touch|"
                     r"dns_cache_lookup|tomsg|reply_info_copy|rrset_array_lock|query_info_compare|reply_info_answer_copy"),
    ("cache insert", r"lruhash_insert|slabhash_insert|table_insert|bin_split|reclaim_space|dns_cache_store|"
                     r"rrset_cache_update|msg_cache|reply_info_parse|parse_copy|packed_rrset|rrset_cache_"),
    ("reply encoding and compression", r"reply_info_encode|reply_info_answer_encode|insert_section|packed_rrset_encode|"
                                       r"compress|dname_buffer_write|attach_edns|edns_|sldns_buffer_write"),
    ("query parse and ACL", r"query_info_parse|parse_|worker_check_request|acl_|addr_tree|check_ip|"
                            r"worker_handle_request|answer_from_cache|local_zones_answer|local_zone"),
    ("event loop and network (userland)", r"comm_|event_|epoll|libevent|evmap|recvmsg|sendmsg|sendto|recvfrom|"
                                          r"sock_|udp_|ub_event"),
    ("memory", r"malloc|free|calloc|realloc|memcpy|memmove|memset|regional_|alloc_"),
    ("iterator and mesh (misses)", r"iter_|mesh_|module|auth_|dns_msg|val_|serviced|outnet|outside_network"),
]


def pin(cpus):
    return ["taskset", "-c", cpus]


def profile(build, threads, seconds, mode, rate, names, gen_cpu):
    """Run one build under perf; returns {symbol: samples}, answers."""
    with tempfile.TemporaryDirectory(prefix="steady-prof-") as rundir:
        ub = Unbound(build, rundir, extra_conf=EXTRA % threads)
        ub.start()
        try:
            subprocess.run(["taskset", "-a", "-p", "-c", "0-%d" % (threads - 1), str(ub.proc.pid)],
                           check=True, stdout=subprocess.DEVNULL)
            subprocess.run(pin(gen_cpu) + ["dnsperf", "-s", "127.0.0.1", "-p", str(ub.port), "-d", names["hits"],
                                           "-l", "2", "-c", "8", "-q", "200"],
                           check=True, stdout=subprocess.DEVNULL)
            data = os.path.join(rundir, "perf.data")
            perf = subprocess.Popen(["perf", "record", "-e", "cpu-clock", "-F", "4999", "-g", "-o", data,
                                     "-p", str(ub.proc.pid)], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            time.sleep(0.5)
            cmd = pin(gen_cpu) + ["dnsperf", "-s", "127.0.0.1", "-p", str(ub.port), "-l", str(seconds),
                                  "-c", "8", "-q", "200", "-d", names[mode]]
            if mode == "misses":
                cmd += ["-Q", str(rate)]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            perf.send_signal(2)
            perf.wait()
            answers = int(re.search(r"Queries completed:\s+(\d+)", out).group(1))
            rep = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "sym",
                                  "--stdio", "-g", "none", "--percent-limit", "0"],
                                 capture_output=True, text=True, check=True).stdout
        finally:
            ub.stop()
    samples = {}
    for line in rep.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(\[[k.]\])\s+(.*\S)", line)
        if m:
            sym = m.group(3)
            samples[("[k] " if m.group(2) == "[k]" else "") + sym] = float(m.group(1))
    return samples, answers


def group_of(sym):
    for name, pat in GROUPS:
        if re.search(pat, sym):
            return name
    return "other"


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("--stock", default="build/stock")
    ap.add_argument("--fork", default="build/fork")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--mode", choices=["hits", "misses"], default="hits")
    ap.add_argument("--rate", type=int, default=3000)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--out")
    a = ap.parse_args()
    gen_cpu = str(os.cpu_count() - 1)
    with tempfile.TemporaryDirectory(prefix="steady-prof-names-") as d:
        names = {"hits": os.path.join(d, "hit.txt"), "misses": os.path.join(d, "miss.txt")}
        with open(names["hits"], "w") as f:
            f.writelines("h%d.example.test A\n" % i for i in range(1000))
        with open(names["misses"], "w") as f:
            f.writelines("p%dx%d.example.test A\n" % (os.getpid(), i) for i in range(a.rate * a.seconds * 3))
        res = {}
        for label in ("stock", "fork"):
            res[label] = profile(os.path.abspath(getattr(a, label)), a.threads, a.seconds, a.mode,
                                 a.rate, names, gen_cpu)
    lines = ["## Where the CPU of a %s goes: stock against fork, %d thread(s)\n" % (
                 "cached answer" if a.mode == "hits" else "cache miss", a.threads),
             "Command: `flock build/.bench.lock %s`  " % " ".join(["bench/cpu_profile.py"] + sys.argv[1:]),
             "Date: %s; %d CPUs; server on CPUs 0..%d, dnsperf on CPU %s (%s); perf record -e cpu-clock "
             "-F 4999 -p PID during the %d s run; shares of the server's samples, summed by symbol and "
             "grouped by name (bench/cpu_profile.py GROUPS). One run per build.\n" % (
                 time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), os.cpu_count(), a.threads - 1,
                 gen_cpu, "as fast as it goes" if a.mode == "hits" else "%d queries/s" % a.rate, a.seconds),
             "Answers in the run: stock %d, fork %d.\n" % (res["stock"][1], res["fork"][1]),
             "| group | stock % | fork % |", "|---|---|---|"]
    groups = {}
    for label in ("stock", "fork"):
        g = collections.Counter()
        for sym, pct in res[label][0].items():
            g[group_of(sym)] += pct
        groups[label] = g
    for name in [n for n, _ in GROUPS] + ["other"]:
        lines.append("| %s | %.1f | %.1f |" % (name, groups["stock"][name], groups["fork"][name]))
    for label in ("stock", "fork"):
        lines += ["", "Top %d symbols, %s:" % (a.top, label), "", "| % | symbol | group |", "|---|---|---|"]
        for sym, pct in sorted(res[label][0].items(), key=lambda kv: -kv[1])[:a.top]:
            lines.append("| %.2f | `%s` | %s |" % (pct, sym, group_of(sym)))
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
