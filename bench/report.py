#!/usr/bin/env python3
"""make bench: every benchmark of Unbound Steady, one after the other
(never two at once), into one report with its plots. Each part is a
script of bench/ that also runs on its own; the report gives, per part,
the command that reproduces it and how long it took.

  lruhash    bench/lruhash_bench.py  the cache table alone, stock and fork
  hash       bench/hash_qps.py       cache-hash lookup3 against xxh3
  health     bench/cache_health.py   the cache health statistics and guard
  cache-e2e  bench/cache_e2e.py      cache growth end to end, stock and fork
  zone       bench/zone_stall.py     zone update stalls, stock and fork
  peers      bench/peers.py          W1-W4 against pdns-recursor,
                                     knot-resolver and bind9
  scale-out  bench/scale_out.py      dnsdist in front of pools of 3
  rpz-scale  bench/rpz_scale.py      an RPZ of 10^7 triggers updated 60
                                     times 20 s apart: stock, the fork
                                     with and without its journal, BIND
                                     and pdns-recursor (102 minutes:
                                     run only when --only names it)

--quick runs each with small sizes and short runs (a smoke check; its
figures are not results). Needs build/fork, build/stock,
build/fork-hashbug and build/stock-hashbug (make bench builds them) and
the peers (scripts/install-deps.sh bench).

usage: flock build/.bench.lock bench/report.py [--quick] [--only PART,...]
       [--names N] [--dir DIR]
  --only  run these parts and replace their sections (and rows of the
          part table) in an existing REPORT.md; the other parts stay as
          they were, and the heading says which parts ran when
  --names the RPZ size of rpz-scale (default 10^7; make bench NAMES=N)
  --dir   where REPORT.md and the plots go (default doc/bench)"""

import argparse
import os
import platform
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "testcode"))
from harness.server import read_pin  # noqa: E402

# part: (full arguments, quick arguments); OUT and PLOT are filled in
PARTS = [
    ("lruhash", "lruhash_bench.py", "--reps 3 --only grow,lookup --grow-sizes 1000000,4000000 --out OUT --plot PLOT",
     "--quick --reps 1 --only grow,lookup --out OUT --plot PLOT"),
    ("hash", "hash_qps.py", "--seconds 3 --reps 3 --out OUT",
     "--seconds 2 --reps 1 --out OUT"),
    ("health", "cache_health.py", "--seconds 2 --reps 3 --hit-reps 3 --scrapes 10 --out OUT",
     "--seconds 1 --reps 1 --hit-reps 1 --scrapes 3 --out OUT"),
    ("cache-e2e", "cache_e2e.py", "--seconds 60 --reps 1 --out OUT --plot PLOT.svg",
     "--seconds 20 --reps 1 --out OUT --plot PLOT.svg"),
    ("zone", "zone_stall.py", "--sizes 1000000 --threads 2 --updates 2 --out OUT --plot PLOT.svg",
     "--sizes 50000 --threads 2 --updates 1 --out OUT --plot PLOT.svg"),
    ("peers", "peers.py", "--seconds 3 --window 30 --out OUT --plot PLOT",
     "--reps 1 --seconds 1 --growth 10 --zone-records 20000 --window 10 --out OUT --plot PLOT"),
    ("scale-out", "scale_out.py", "--seconds 60 --out OUT",
     "--seconds 12 --zone-records 20000 --out OUT"),
    ("multicore", "multicore.py", "--out OUT", "--quick --out OUT"),
    ("parse-ptrs", "parse_ptrs.py", "--reps 5 --runs 9 --out OUT",
     "--reps 1 --runs 3 --out OUT"),
    ("rpz-scale", "rpz_scale.py", "--names NAMES --updates 60 --interval 20 --load-timeout 600 "
     "--builds stock=build/stock,fork=build/fork,fork-journal=build/fork+journal,bind=bind,pdns=pdns "
     "--out OUT",
     "--names 20000 --updates 7 --interval 5 --out OUT"),
    ("rpz-startup", "rpz_startup.py", "--names NAMES --runs 3 --out OUT",
     "--names 20000 --runs 1 --out OUT"),
]
# parts that run only when --only names them (their full run takes hours)
OPT_IN = {"rpz-scale", "rpz-startup"}


def log(msg):
    print("[bench %s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def machine():
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    vers = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Version}\n",
                           "pdns-recursor", "knot-resolver", "bind9", "dnsdist", "nsd", "dnsperf"],
                          capture_output=True, text=True).stdout.split("\n")
    commit = subprocess.run(["git", "-C", TOP, "log", "-1", "--format=%h %cs"],
                            capture_output=True, text=True).stdout.strip()
    # a run with edited scripts is not a run of that commit
    if subprocess.run(["git", "-C", TOP, "status", "--porcelain", "--untracked-files=no",
                       "--", "bench", "testcode", "patches"],
                      capture_output=True, text=True).stdout.strip():
        commit += " with uncommitted changes"
    return ["- machine: %d CPUs (%s), Linux %s, %d MiB" % (
                os.cpu_count(), cpu, platform.release(),
                os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20),
            "- tree: %s; peers: %s" % (commit, ", ".join(v for v in vers if v))]


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only")
    ap.add_argument("--names", type=int, default=10000000)
    ap.add_argument("--dir", default=os.path.join(TOP, "doc", "bench"))
    a = ap.parse_args()
    only = a.only.split(",") if a.only else [p[0] for p in PARTS if p[0] not in OPT_IN]
    unknown = set(only) - {p[0] for p in PARTS}
    if unknown:
        sys.exit("report: no part %s" % ", ".join(sorted(unknown)))
    os.makedirs(a.dir, exist_ok=True)
    rel = os.path.relpath(a.dir, TOP)
    report = os.path.join(a.dir, "REPORT.md")
    # with --only, the other parts' sections and rows come from the report
    # already there
    sections, rows = read_report(report) if a.only else ({}, {})
    host, tree_and_peers = machine()
    tree = tree_and_peers.split("tree: ", 1)[1].split("; peers: ", 1)[0]
    t_all = time.monotonic()
    failed = []
    for name, script, full, quick in PARTS:
        if name not in only:
            continue
        args = (quick if a.quick else full).replace("OUT", os.path.join(rel, name + ".md")) \
                                            .replace("PLOT", os.path.join(rel, name)) \
                                            .replace("NAMES", str(a.names))
        cmd = ["bench/" + script] + args.split()
        log("%s: %s" % (name, " ".join(cmd)))
        t = time.monotonic()
        r = subprocess.run([sys.executable] + cmd, cwd=TOP)
        secs = time.monotonic() - t
        rows[name] = "| %s | `%s`%s | %s | %.1f |" % (
            name, " ".join(cmd), "" if r.returncode == 0 else " **failed**",
            "%s, tree %s" % (time.strftime("%Y-%m-%d"), tree), secs / 60)
        log("%s: %s in %.0f s" % (name, "done" if r.returncode == 0 else "FAILED", secs))
        md = os.path.join(a.dir, name + ".md")
        sections.pop(name, None)
        if r.returncode != 0:
            failed.append(name)
        elif os.path.exists(md):
            with open(md) as f:
                text = f.read()
            # every heading one level down: the part's title becomes a
            # section of the report
            text = re.sub(r"(?m)^(#+) ", r"#\1 ", text)
            sections[name] = "<!-- part %s: %s -->\n%s" % (name, " ".join(cmd), text)
    total = time.monotonic() - t_all
    head = ["# Unbound Steady benchmark report%s" % (" (QUICK: a smoke run, not results)" if a.quick else ""), "",
            "Written by `make bench%s` (bench/report.py) on %s%s; that run took %.0f minutes "
            "(%s)." % (" QUICK=1" if a.quick else "", time.strftime("%Y-%m-%d"),
                       ", running only some parts again (`--only`)" if a.only else "",
                       total / 60, ", ".join(n for n in only))]
    head += [host, "- peers: " + tree_and_peers.split("; peers: ", 1)[1]]
    pin = read_pin()
    head += ["", "Every figure is a median with (min–max) of its runs unless a table says one run; "
             "stock is Unbound %s, Debian's %s (make stock), fork is the same base with "
             "patches/ (make). What is not fair on this machine: it has 2 noisy vCPUs, and the load "
             "generator (dnsperf or the probe), NSD and dnsdist take CPU from the servers under test; "
             "every server gets the same, and no two benchmarks run at once." % (
                 pin["BASE_UPSTREAM_VERSION"], pin["BASE_DEBIAN_VERSION"]), "",
             "| part | command (from the top of the tree, under `flock build/.bench.lock`) | "
             "run on | minutes |",
             "|---|---|---|---|"]
    head += [rows[name] for name, *_ in PARTS if name in rows]
    # one blank line between parts, however many a part read from the
    # old report ended with (else every run adds one)
    text = "\n".join(head) + "\n\n" + "\n".join(sections[name].rstrip("\n") + "\n" for name, *_ in PARTS
                                                if name in sections)
    with open(report, "w") as f:
        f.write(text)
    log("wrote %s in %.0f s%s" % (os.path.join(rel, "REPORT.md"), total,
                                  "; failed: " + ", ".join(failed) if failed else ""))
    sys.exit(1 if failed else 0)


def read_report(path):
    """The sections ({part: text from its '<!-- part' line}) and the rows
    of the part table ({part: line}) of an existing REPORT.md; empty when
    there is none. A row of a report written before the 'run on' column
    gets the date and tree of that report's heading."""
    sections, rows = {}, {}
    if not os.path.exists(path):
        return sections, rows
    with open(path) as f:
        text = f.read()
    names = [p[0] for p in PARTS]
    date = re.search(r"^Written by .* on (\d{4}-\d\d-\d\d)", text, re.M)
    tree = re.search(r"^- tree: (\w+)", text, re.M)
    run_on = "%s, tree %s" % (date.group(1) if date else "?", tree.group(1) if tree else "?")
    for m in re.finditer(r"(?ms)^<!-- part ([\w-]+): .*?(?=^<!-- part |\Z)", text):
        sections[m.group(1)] = m.group(0)
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0] in names and cells[1].startswith("`"):
            if len(cells) == 3:
                cells = cells[:2] + [run_on] + cells[2:]
            rows[cells[0]] = "| " + " | ".join(cells) + " |"
    return sections, rows


if __name__ == "__main__":
    main()
