#!/usr/bin/env python3
"""Where a cached answer's (or a cache miss's) CPU goes, stock against
fork: each build is started on loopback with the demo configuration
(testcode/harness/server.py) pinned to CPUs 0..T-1, the 1000 names of
the hit benchmark are warmed, and the server is measured while dnsperf,
pinned to the last CPU, asks the warm names (hits) or unique names under
the zone's wildcard (misses). Symbols are put in groups by name (kernel,
event loop, parse, ACL, cache lookup and hash, locks, reply encoding,
statistics, cache insert, ...); the report has the groups and the top
symbols of both builds.

--tool perf (the default): perf record (cpu-clock samples, the machines
here have no hardware counters) during a --seconds run, dnsperf as fast
as it goes (hits) or at --rate queries/s (misses): shares of the
server's CPU, kernel included, one run per build.

--tool syscalls: as perf, with perf stat counting the server's system
calls (tracepoints) instead of sampling: calls per answer.

--tool callgrind: unbound runs under valgrind's callgrind, one thread;
its counters are zeroed after the warm-up and dumped after --count
answers (dnsperf with 10 queries outstanding, as valgrind is slow):
userland instructions per answer, by symbol. Instruction counts leave
out the kernel, cache misses and waiting on locks, but they do not vary
from run to run as CPU time does, so they tell the builds' userland work
apart where timings overlap.

usage: flock build/.bench.lock bench/cpu_profile.py [--stock build/stock]
       [--fork build/fork] [--tool perf|callgrind|syscalls] [--threads 1]
       [--seconds 10] [--mode hits|misses] [--rate 3000] [--count N]
       [--top 25] [--out FILE]"""

import argparse
import collections
import glob
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
                     r"dns_cache_lookup|tomsg|reply_info_copy|rrset_array_lock|query_info_compare|reply_info_answer_copy|"
                     r"rrset_cache_touch"),
    ("name comparison", r"dname_lab_cmp|query_dname_compare|dname_count_labels|dname_subdomain_c|dname_strict"),
    ("cache insert", r"lruhash_insert|slabhash_insert|table_insert|bin_split|reclaim_space|dns_cache_store|"
                     r"rrset_cache_update|msg_cache|reply_info_parse|parse_copy|packed_rrset_copy|rrset_cache_"),
    ("reply encoding and compression", r"reply_info_encode|reply_info_answer_encode|insert_section|packed_rrset_encode|"
                                       r"compress|dname_buffer_write|attach_edns|edns_|sldns_buffer_write"),
    ("query parse and ACL", r"query_info_parse|parse_|worker_check_request|acl_|addr_tree|check_ip|"
                            r"worker_handle_request|answer_from_cache|local_zones_answer|local_zone"),
    ("event loop and network (userland)", r"comm_|event_|epoll|libevent|evmap|recvmsg|sendmsg|sendto|recvfrom|"
                                          r"sock_|udp_|ub_event"),
    ("memory", r"malloc|free|calloc|realloc|memcpy|memmove|memset|regional_|alloc_"),
    ("iterator and mesh (misses)", r"iter_|mesh_|module|auth_|dns_msg|val_|serviced|outnet|outside_network"),
]


# The steps of an answer under callgrind: the instructions of every call
# these functions make (the callee and all it calls), per answer.
STEP_PARENTS = ["comm_point_udp_callback", "worker_handle_request"]


def pin(cpus):
    return ["taskset", "-c", cpus]


# The system calls counted by --tool syscalls (tracepoints).
SYSCALLS = ["epoll_wait", "epoll_pwait", "recvfrom", "recvmsg", "recvmmsg", "sendto", "sendmsg", "sendmmsg",
            "poll", "futex"]


def profile(build, threads, seconds, mode, rate, names, gen_cpu, tool="perf"):
    """Run one build under perf; returns {symbol: % of samples} (tool
    perf) or {system call: calls per answer} (tool syscalls), answers."""
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
            if tool == "syscalls":
                events = ",".join(["syscalls:sys_enter_" + c for c in SYSCALLS] + ["raw_syscalls:sys_enter"])
                cmd = ["perf", "stat", "-x", ",", "-o", data, "-e", events]
            else:
                cmd = ["perf", "record", "-e", "cpu-clock", "-F", "4999", "-g", "-o", data]
            perf = subprocess.Popen(cmd + ["-p", str(ub.proc.pid)], stdout=subprocess.DEVNULL,
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
            if tool == "syscalls":
                with open(data) as f:
                    rep = f.read()
            else:
                rep = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "sym",
                                      "--stdio", "-g", "none", "--percent-limit", "0"],
                                     capture_output=True, text=True, check=True).stdout
        finally:
            ub.stop()
    if tool == "syscalls":
        counts = {}
        for line in rep.splitlines():
            f = line.split(",")
            if len(f) > 2 and f[0].isdigit():
                name = "all system calls" if f[2] == "raw_syscalls:sys_enter" else f[2].split("sys_enter_")[-1]
                counts[name] = int(f[0]) / answers
        return counts, answers
    samples = {}
    for line in rep.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(\[[k.]\])\s+(.*\S)", line)
        if m:
            sym = m.group(3)
            samples[("[k] " if m.group(2) == "[k]" else "") + sym] = float(m.group(1))
    return samples, answers


def callgrind_costs(path):
    """From a callgrind output file: {function: instructions in the
    function itself} and {caller: {callee: instructions of the calls,
    callee included}}. Read here rather than with callgrind_annotate,
    which gives the functions that were on the stack when the counters
    were zeroed (main, the event loop) the whole dump as their own cost.
    In the file, "fn=" starts a function's cost lines; the line after a
    "calls=" line is the inclusive cost of the call to the last "cfn=",
    not the caller's own."""
    names = {}
    own = collections.Counter()
    calls = collections.defaultdict(collections.Counter)
    fn = callee = None
    after_calls = False
    with open(path) as f:
        for line in f:
            m = re.match(r"(c?)fn=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
            if m:
                if m.group(3):
                    names[m.group(2)] = m.group(3)
                if m.group(1):
                    callee = names[m.group(2)]
                else:
                    fn = names[m.group(2)]
                continue
            if line.startswith("calls="):
                after_calls = True
            elif fn is not None and re.match(r"[-+*\d]", line):
                if after_calls:
                    calls[fn][callee] += int(line.split()[1])
                else:
                    own[fn] += int(line.split()[1])
                after_calls = False
    return own, calls


def profile_callgrind(build, count, mode, names):
    """Run one build under callgrind for count answers; returns
    {symbol: instructions per answer}, answers, and {step parent:
    {callee: instructions per answer of the call}}."""
    with tempfile.TemporaryDirectory(prefix="steady-prof-") as rundir:
        ub = Unbound(build, rundir, extra_conf=EXTRA % 1)
        out_file = os.path.join(rundir, "callgrind.out")
        ub.start(timeout=120, wrapper=["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out_file])
        try:
            gen = ["dnsperf", "-s", "127.0.0.1", "-p", str(ub.port), "-c", "1", "-q", "10", "-t", "10"]
            subprocess.run(gen + ["-d", names["hits"], "-n", "2"], check=True, stdout=subprocess.DEVNULL)
            subprocess.run(["callgrind_control", "-z", str(ub.proc.pid)], check=True, stdout=subprocess.DEVNULL)
            # the hit file has 1000 names, the miss file count
            passes = str(max(1, count // 1000)) if mode == "hits" else "1"
            out = subprocess.run(gen + ["-d", names[mode], "-n", passes], check=True, capture_output=True,
                                 text=True).stdout
            subprocess.run(["callgrind_control", "-d", str(ub.proc.pid)], check=True, stdout=subprocess.DEVNULL)
            # callgrind names a dump on request OUT.N; OUT itself is
            # written at exit
            dumps = glob.glob(out_file + ".*")
            if len(dumps) != 1:
                raise RuntimeError("callgrind wrote %d dumps, not 1" % len(dumps))
            own, calls = callgrind_costs(dumps[0])
        finally:
            ub.stop(timeout=60)
    answers = int(re.search(r"Queries completed:\s+(\d+)", out).group(1))
    per_answer = {sym: ir / answers for sym, ir in own.items()}
    steps = {}
    for parent in STEP_PARENTS:
        steps[parent] = {callee: ir / answers for callee, ir in calls.get(parent, {}).items()}
        steps[parent]["(its own code)"] = own.get(parent, 0) / answers
    return per_answer, answers, steps


def group_of(sym):
    for name, pat in GROUPS:
        if re.search(pat, sym):
            return name
    return "other"


def emit(lines, out):
    """Print the report, and write it to the file out if given."""
    text = "\n".join(lines) + "\n"
    print(text)
    if out:
        with open(out, "w") as f:
            f.write(text)


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("--stock", default="build/stock")
    ap.add_argument("--fork", default="build/fork")
    ap.add_argument("--tool", choices=["perf", "callgrind", "syscalls"], default="perf")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--mode", choices=["hits", "misses"], default="hits")
    ap.add_argument("--rate", type=int, default=3000)
    ap.add_argument("--count", type=int, help="answers under callgrind (default: 20000 hits, 3000 misses)")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.tool == "callgrind" and a.threads != 1:
        ap.error("--tool callgrind runs one thread")
    count = a.count or (20000 if a.mode == "hits" else 3000)
    gen_cpu = str(os.cpu_count() - 1)
    misses = count if a.tool == "callgrind" else a.rate * a.seconds * 3
    with tempfile.TemporaryDirectory(prefix="steady-prof-names-") as d:
        names = {"hits": os.path.join(d, "hit.txt"), "misses": os.path.join(d, "miss.txt")}
        with open(names["hits"], "w") as f:
            f.writelines("h%d.example.test A\n" % i for i in range(1000))
        with open(names["misses"], "w") as f:
            f.writelines("p%dx%d.example.test A\n" % (os.getpid(), i) for i in range(misses))
        res = {}
        for label in ("stock", "fork"):
            build = os.path.abspath(getattr(a, label))
            if a.tool == "callgrind":
                res[label] = profile_callgrind(build, count, a.mode, names)
            else:
                res[label] = profile(build, a.threads, a.seconds, a.mode, a.rate, names, gen_cpu, a.tool)
    what = "cached answer" if a.mode == "hits" else "cache miss"
    date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = ["## Where the CPU of a %s goes: stock against fork, %d thread(s), %s\n" % (what, a.threads, a.tool),
             "Command: `flock build/.bench.lock %s`  " % " ".join(["bench/cpu_profile.py"] + sys.argv[1:])]
    if a.tool == "callgrind":
        lines.append("Date: %s; unbound under `valgrind --tool=callgrind`, counters zeroed after the warm-up "
                     "and dumped after the run; dnsperf (10 queries outstanding) asks %s; userland "
                     "instructions per answer, summed by symbol and grouped by name (bench/cpu_profile.py "
                     "GROUPS). Instruction counts leave out the kernel.\n" % (
                         date, "the 1000 warm names" if a.mode == "hits" else "%d names never asked" % count))
        unit, fmt = "instructions per answer", "%.0f"
    else:
        lines.append("Date: %s; %d CPUs; server on CPUs 0..%d, dnsperf on CPU %s (%s); %s during the %d s "
                     "run. One run per build.\n" % (
                         date, os.cpu_count(), a.threads - 1, gen_cpu,
                         "as fast as it goes" if a.mode == "hits" else "%d queries/s" % a.rate,
                         "perf stat -e syscalls:sys_enter_CALL -p PID: system calls per answer"
                         if a.tool == "syscalls" else
                         "perf record -e cpu-clock -F 4999 -p PID: shares of the server's samples, summed by "
                         "symbol and grouped by name (bench/cpu_profile.py GROUPS)", a.seconds))
        unit, fmt = "%", "%.1f"
    if a.tool == "syscalls":
        lines += ["Answers in the run: stock %d, fork %d.\n" % (res["stock"][1], res["fork"][1]),
                  "| system call | stock, per answer | fork, per answer |", "|---|---|---|"]
        for call in SYSCALLS + ["all system calls"]:
            st, fk = res["stock"][0].get(call, 0), res["fork"][0].get(call, 0)
            if st or fk or call == "all system calls":
                lines.append("| %s | %.3f | %.3f |" % (call, st, fk))
        emit(lines, a.out)
        return
    lines += ["Answers in the run: stock %d, fork %d.\n" % (res["stock"][1], res["fork"][1]),
              "| group | stock, %s | fork, %s |" % (unit, unit), "|---|---|---|"]
    groups = {}
    for label in ("stock", "fork"):
        g = collections.Counter()
        for sym, value in res[label][0].items():
            g[group_of(sym)] += value
        groups[label] = g
    for name in [n for n, _ in GROUPS] + ["other"]:
        lines.append(("| %s | " + fmt + " | " + fmt + " |") % (name, groups["stock"][name], groups["fork"][name]))
    if a.tool == "callgrind":
        tot = {label: sum(res[label][0].values()) for label in ("stock", "fork")}
        lines.append("| **total** | **%.0f** | **%.0f** (%.2f of stock) |" % (
            tot["stock"], tot["fork"], tot["fork"] / tot["stock"]))
    if a.tool == "callgrind":
        for parent in STEP_PARENTS:
            lines += ["", "Calls made by `%s`, instructions per answer, the callee and all it calls "
                      "(those above 1%% of the fork's total):" % parent, "",
                      "| callee | stock | fork |", "|---|---|---|"]
            st, fk = res["stock"][2][parent], res["fork"][2][parent]
            for callee in sorted(set(st) | set(fk), key=lambda c: -max(st.get(c, 0), fk.get(c, 0))):
                if max(st.get(callee, 0), fk.get(callee, 0)) >= tot["fork"] / 100:
                    lines.append("| `%s` | %.0f | %.0f |" % (callee, st.get(callee, 0), fk.get(callee, 0)))
    for label in ("stock", "fork"):
        lines += ["", "Top %d symbols, %s:" % (a.top, label), "", "| %s | symbol | group |" % unit, "|---|---|---|"]
        for sym, value in sorted(res[label][0].items(), key=lambda kv: -kv[1])[:a.top]:
            lines.append(("| " + fmt + " | `%s` | %s |") % (value, sym, group_of(sym)))
    emit(lines, a.out)


if __name__ == "__main__":
    main()
