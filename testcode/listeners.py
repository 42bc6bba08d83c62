#!/usr/bin/env python3
"""Listening sockets of this machine (ss -ltnup), and which of them are
services: a packaged program running with its packaged configuration, as
a package's postinst would start it. Used by test_deps_listen.sh."""

import json
import os
import re
import subprocess
import sys

usage = """usage: listeners.py snapshot FILE
       listeners.py new BEFORE AFTER
  snapshot writes every listening TCP/UDP socket with its process to FILE;
  new prints the sockets of AFTER that BEFORE did not have and that a
  service holds, and exits 1 when there is one. A socket of a program
  started with a configuration or data path outside /etc, /usr and /var
  (a test's private daemon, e.g. nsd -c /tmp/x/nsd.conf) is shown but not
  counted: other tests may run on this machine at the same time."""

USERS = re.compile(r'\("([^"]*)",pid=(\d+)')


def proc_info(pid):
    try:
        exe = os.readlink("/proc/%s/exe" % pid)
    except OSError:
        exe = "?"
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            cmd = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        cmd = []
    return exe, cmd


def snapshot():
    out = subprocess.run(["ss", "-ltnupH"], capture_output=True, text=True, check=True).stdout
    socks = []
    for line in out.splitlines():
        f = line.split()
        if len(f) < 5:
            continue
        proto, local = f[0], f[4]
        procs = []
        for name, pid in USERS.findall(line):
            exe, cmd = proc_info(pid)
            procs.append({"name": name, "pid": int(pid), "exe": exe, "cmd": cmd})
        socks.append({"proto": proto, "local": local, "procs": procs})
    return socks


def private_paths(cmd):
    """Paths in a command line outside the system's configuration."""
    paths = []
    for a in cmd[1:]:
        for part in a.split("="):
            if part.startswith("/") and not part.startswith(("/etc/", "/usr/", "/var/", "/run/")):
                paths.append(part)
    return paths


def packaged(exe):
    if exe == "?":
        return False
    return subprocess.run(["dpkg", "-S", exe], capture_output=True).returncode == 0


def key(s):
    return (s["proto"], s["local"], tuple(sorted(p["exe"] for p in s["procs"])))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "snapshot":
        with open(sys.argv[2], "w") as f:
            json.dump(snapshot(), f, indent=1)
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "new":
        with open(sys.argv[2]) as f:
            before = {key(s) for s in json.load(f)}
        with open(sys.argv[3]) as f:
            after = json.load(f)
        bad = 0
        for s in after:
            if key(s) in before:
                continue
            procs = s["procs"] or [{"name": "?", "pid": 0, "exe": "?", "cmd": []}]
            for p in procs:
                desc = "%s %s by %s (pid %d: %s)" % (s["proto"], s["local"], p["name"], p["pid"],
                                                   " ".join(p["cmd"]) or p["exe"])
                priv = private_paths(p["cmd"])
                if priv:
                    print("  not counted (a private instance, %s): %s" % (priv[0], desc))
                elif p["exe"] != "?" and not packaged(p["exe"]):
                    print("  not counted (not a packaged program): %s" % desc)
                else:
                    print("  NEW LISTENER: %s" % desc)
                    bad += 1
        return 1 if bad else 0
    print(usage, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
