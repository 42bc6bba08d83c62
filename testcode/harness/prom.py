"""Prometheus tools for the monitoring tests: promtool, contrib/metrics.awk
over a stats scrape, and promtool rules tests of conf/monitoring's
alerting rules on given series."""

import os
import re
import subprocess

from harness.server import TOP

CONF = os.path.join(TOP, "conf", "monitoring")
RULES = os.path.join(CONF, "unbound-steady-alerts.yml")


def promtool(*args, stdin=None):
    """promtool with args; the CompletedProcess, text output captured."""
    return subprocess.run(["promtool"] + list(args), input=stdin, capture_output=True, text=True)


def metrics_awk(src, stats_text):
    """The output of SRCDIR/contrib/metrics.awk on the text of a stats
    command."""
    return subprocess.run(["awk", "-f", os.path.join(src, "contrib", "metrics.awk")],
                          input=stats_text, capture_output=True, text=True, check=True).stdout


def samples(metrics):
    """The samples of a metrics text: {'name{labels}': 'value'}."""
    out = {}
    for line in metrics.splitlines():
        m = re.match(r"^(\w+)(\{[^}]*\})? (\S+)$", line)
        if m:
            out[m.group(1) + (m.group(2) or "")] = m.group(3)
    return out


def rules_test(d, name, series, minutes=20):
    """Run promtool test rules on series (name{labels} -> a promtool
    values text, such as '5x20' or '0+60x20', one value a minute),
    expecting no alert after the given minutes; returns promtool's exit
    code and the alerts that fired all the same. The test file is
    written into directory d."""
    names = re.findall(r"- alert: (\w+)", open(RULES).read())
    lines = ["rule_files:", "  - %s" % RULES, "evaluation_interval: 1m", "tests:",
             "  - interval: 1m", "    input_series:"]
    for s, v in series.items():
        lines += ["      - series: '%s'" % s, "        values: '%s'" % v]
    lines.append("    alert_rule_test:")
    for a in names:
        lines += ["      - eval_time: %dm" % minutes, "        alertname: %s" % a]
    path = os.path.join(d, name + ".test.yml")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    r = promtool("test", "rules", path)
    fired = set(re.findall(r"alertname: (\w+), time", r.stdout + r.stderr))
    return r.returncode, fired
