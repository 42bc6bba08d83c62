#!/usr/bin/env python3
"""The multicore part of make bench (ONLY=multicore): writes the portable
bundle (scripts/bench-bundle.sh: stock and fork, the benchmark programs,
dnsperf, busybox, their libraries and loader) and runs its run script
(bench/multicore.sh) on this machine, so that make bench and an
operator's run of the bundle measure the same way.

usage: flock build/.bench.lock bench/multicore.py [--quick] --out FILE
       [-- RUN.SH OPTIONS]"""

import argparse
import os
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUNDLE = os.path.join(TOP, "build", "bench-bundle")


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", required=True)
    ap.add_argument("rest", nargs="*")
    a = ap.parse_args()
    subprocess.run([os.path.join(TOP, "scripts", "bench-bundle.sh"), os.path.join(TOP, "build", "stock"),
                    os.path.join(TOP, "build", "fork"), BUNDLE], check=True)
    cmd = [os.path.join(BUNDLE, "bin", "busybox"), "sh", os.path.join(BUNDLE, "run.sh"),
           "--out", os.path.abspath(a.out)] + (["--quick"] if a.quick else []) + a.rest
    return subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode


if __name__ == "__main__":
    sys.exit(main())
