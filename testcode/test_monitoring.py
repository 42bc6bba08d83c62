#!/usr/bin/env python3
"""The monitoring files in conf/monitoring work with what the fork really
exports (issue: ready for an operator, section 5):

1. promtool check rules and promtool test rules on the alerting rules:
   healthy series stay quiet, the stale-hash bug's series fire.
2. The fork's statistics through its contrib/metrics.awk parse with
   promtool check metrics; lint findings are allowed only for the
   metrics upstream's metrics.awk already had.
3. The rules meet the real names and labels: a promtool rules test is
   made from that scrape, once as it is (no alert may fire) and once
   with the rrset interval maximum and hash repairs raised as the bug
   raises them (UnboundCacheChainVeryLong and UnboundCacheHashRepair
   must fire), so a renamed metric or label fails here.
4. Every expression of the Grafana dashboard names only metrics that
   metrics.awk printed or that unbound_exporter makes of the stats lines
   (unbound_{msg,rrset}_cache_max_collisions_total, from
   {msg,rrset}.cache.max_collisions, which must be in the stats).

usage: test_monitoring.py BUILDDIR SRCDIR"""

import json
import os
import re
import subprocess
import sys
import tempfile

from harness.prom import CONF, RULES, metrics_awk, promtool, rules_test, samples as metric_samples
from harness.server import Unbound

# upstream's metrics.awk names that promtool's linter complains about
UPSTREAM_LINT = {"unbound_histogram_seconds"}
EXPORTER = {"unbound_msg_cache_max_collisions_total": "msg.cache.max_collisions",
            "unbound_rrset_cache_max_collisions_total": "rrset.cache.max_collisions"}


def main():
    if len(sys.argv) != 3:
        print(__doc__.split("usage: ")[1], file=sys.stderr)
        return 2
    build, src = (os.path.abspath(a) for a in sys.argv[1:])
    fails = []

    def check(ok, what):
        print("%s: %s" % ("ok" if ok else "FAIL", what))
        if not ok:
            fails.append(what)

    r = promtool("check", "rules", RULES)
    check(r.returncode == 0, "promtool check rules: " + (r.stdout + r.stderr).strip().replace("\n", " "))
    r = subprocess.run(["promtool", "test", "rules", "unbound-steady-alerts.test.yml"], cwd=CONF,
                       capture_output=True, text=True)
    check(r.returncode == 0, "promtool test rules unbound-steady-alerts.test.yml" +
          ("" if r.returncode == 0 else ":\n" + r.stdout + r.stderr))

    with tempfile.TemporaryDirectory(prefix="steady-mon-") as d:
        ub = Unbound(build, os.path.join(d, "run"))
        ub.start()
        try:
            for i in range(50):
                ub.query("w%d.example.test" % i)
            stats = ub.control("stats_noreset").stdout
        finally:
            ub.stop()
        metrics = metrics_awk(src, stats)
        r = promtool("check", "metrics", stdin=metrics)
        linted = {m for m in re.findall(r"^(\w+) ", r.stdout + r.stderr, re.M)}
        check(r.returncode in (0, 3) and linted <= UPSTREAM_LINT,
              "promtool check metrics on metrics.awk's output (rc %d, lint on %s)" % (
                  r.returncode, sorted(linted) or "nothing"))
        samples = metric_samples(metrics)
        ours = {k: v for k, v in samples.items()
                if k.startswith(("unbound_cache_max_collisions", "unbound_cache_hash_repairs"))}
        check(len(ours) >= 20, "metrics.awk exports %d cache health samples" % len(ours))
        series = {k.replace("{", '{instance="r",'): v + "x20" for k, v in ours.items()}
        rc, fired = rules_test(d, "healthy", series)
        check(rc == 0 and not fired, "no alert on this server's own scrape (fired: %s)" % (
            sorted(fired) or "none"))
        bug = dict(series)
        for k in bug:
            if 'type="rrset.cache.max_collisions_interval"' in k:
                bug[k] = "19999x20"
            if 'type="rrset.cache.hash_repairs"' in k:
                bug[k] = "20000x20"
        rc, fired = rules_test(d, "bug", bug)
        want = {"UnboundCacheChainVeryLong", "UnboundCacheChainLong", "UnboundCacheHashRepair"}
        check(want <= fired, "the scrape's names with the bug's values fire %s (fired: %s)" % (
            sorted(want), sorted(fired)))

        dash = json.load(open(os.path.join(CONF, "unbound-steady-dashboard.json")))
        names = {k.split("{")[0] for k in samples}
        used = set()
        for p in dash["panels"]:
            for t in p["targets"]:
                used |= set(re.findall(r"\b(unbound_\w+)", t["expr"]))
        unknown = {u for u in used if u not in names and u not in EXPORTER}
        check(not unknown, "dashboard metrics all exported (unknown: %s)" % (sorted(unknown) or "none"))
        lines = dict(line.split("=", 1) for line in stats.splitlines())
        check(all(v in lines for v in EXPORTER.values()),
              "the stats lines unbound_exporter maps are there: %s" % ", ".join(EXPORTER.values()))
    print("monitoring: %d failed" % len(fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
