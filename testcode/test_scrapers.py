#!/usr/bin/env python3
"""The scrapers the base ships keep working on the fork's statistics:
every stats_noreset line is one lowercase name=value (as unbound_exporter
needs); the fork's contrib/metrics.awk exports the new cache health
statistics and the auth zones' (unbound_authzone_*, checked by
test_zone_health.py) and otherwise prints what the base's metrics.awk
prints; the
munin plugin contrib/unbound_munin_ gives a number for every field."""

import os
import re
import stat
import subprocess
import sys
import tempfile

from harness.server import Unbound

usage = "usage: test_scrapers.py BUILDDIR FORK_SRCDIR BASE_SRCDIR"
CACHES = ["msg", "rrset", "infra", "key", "ratelimit", "ip_ratelimit",
          "dnscrypt_shared_secret", "dnscrypt_nonce", "subnet"]
NEW = (["%s.cache.max_collisions" % c for c in CACHES[2:]] +
       ["%s.cache.max_collisions_interval" % c for c in CACHES] +
       ["msg.cache.hash_repairs", "rrset.cache.hash_repairs"])


def awk(script, text):
    return subprocess.run(["awk", "-f", script], input=text, capture_output=True,
                          text=True, check=True).stdout


def main():
    if len(sys.argv) != 4:
        print(usage, file=sys.stderr)
        return 2
    build, forksrc, basesrc = [os.path.abspath(a) for a in sys.argv[1:]]
    fails = []
    with tempfile.TemporaryDirectory(prefix="steady-scrapers-") as rundir:
        with Unbound(build, rundir) as ub:
            for i in range(20):
                ub.query("scrape%d.example.test." % i)
            text = ub.control("stats_noreset").stdout
            names = [l.split("=", 1)[0] for l in text.splitlines()]
            # unbound_exporter: exactly one name=value per line, lowercase
            # dotted names (its regexes are anchored on those)
            for line in text.splitlines():
                if not re.fullmatch(r"[a-zA-Z0-9_.\-]+=-?[0-9.]+(e[-+][0-9]+)?", line):
                    fails.append("not name=value: %r" % line)
            for n in NEW + ["msg.cache.max_collisions", "rrset.cache.max_collisions"]:
                if names.count(n) != 1:
                    fails.append("%s appears %d times" % (n, names.count(n)))
                elif n != n.lower():
                    fails.append("%s is not lowercase" % n)
            # the two old lines stay where they were: right after the cache counts
            i = names.index("msg.cache.max_collisions")
            if names[i - 1] != "key.cache.count" or names[i + 1] != "rrset.cache.max_collisions":
                fails.append("msg/rrset max_collisions moved: %s" % names[i - 1:i + 2])

            # metrics.awk: fork output = base output + the new metrics
            new_out = awk(os.path.join(forksrc, "contrib", "metrics.awk"), text)
            old_out = awk(os.path.join(basesrc, "contrib", "metrics.awk"), text)
            new_lines, old_lines = new_out.splitlines(), old_out.splitlines()
            added = [l for l in new_lines if l not in old_lines]
            removed = [l for l in old_lines if l not in new_lines]
            if removed:
                fails.append("metrics.awk lost lines: %s" % removed[:5])
            for n in NEW:
                metric = "hash_repairs" if "repairs" in n else "max_collisions"
                want = 'unbound_cache_%s{type="%s"} ' % (metric, n)
                if not any(l.startswith(want) for l in added):
                    fails.append("metrics.awk does not export %s" % n)
            for l in added:
                if l and not l.startswith("#") and not l.startswith(("unbound_cache_",
                                                                     "unbound_authzone_")):
                    fails.append("metrics.awk added an unexpected line: %r" % l)

            # munin: runs "unbound-control stats"; point it at a wrapper that
            # asks stats_noreset instead, and read every graph
            wrapper = os.path.join(rundir, "control-noreset")
            with open(wrapper, "w") as f:
                f.write('#!/bin/sh\nfor a; do shift; [ "$a" = stats ] && a=stats_noreset; '
                        'set -- "$@" "$a"; done\nexec %s "$@"\n' % ub.bin("unbound-control"))
            os.chmod(wrapper, stat.S_IRWXU)
            env = dict(os.environ, MUNIN_PLUGSTATE=rundir, unbound_conf=ub.conf,
                       unbound_control=wrapper)
            plugin = os.path.join(forksrc, "contrib", "unbound_munin_")
            for graph in ["hits", "queue", "memory", "by_type", "by_class",
                          "by_opcode", "by_rcode", "by_flags", "histogram"]:
                link = os.path.join(rundir, "unbound_munin_" + graph)
                if not os.path.exists(link):
                    os.symlink(plugin, link)
                r = subprocess.run(["sh", link], env=env, capture_output=True, text=True)
                values = [l for l in r.stdout.splitlines() if ".value " in l]
                if r.returncode != 0 or not values:
                    fails.append("munin %s: exit %d, %d values: %s" % (
                        graph, r.returncode, len(values), r.stderr.strip()))
                for l in values:
                    if not re.fullmatch(r"\S+\.value -?[0-9.]+", l):
                        fails.append("munin %s: bad value line %r" % (graph, l))
            print("stats lines: %d; metrics.awk added %d lines" % (len(names), len(added)))
    for f in fails:
        print("FAIL: " + f)
    if fails:
        return 1
    print("test_scrapers: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
