"""The resolvers that make bench compares, each started on loopback by PID
with the same setup: 2 threads (or processes), DNSSEC validation off,
large caches, ZONE stubbed or forwarded to NSD on 127.0.0.1, everything
else sent to a closed loopback port, so no query leaves the machine.

  unbound  build/fork or build/stock (iterator only, stub-zone)
  pdns     PowerDNS Recursor (pdns_recursor, 2 threads, forward-zones)
  kresd    Knot Resolver (2 kresd processes sharing one cache, STUB)
  bind     BIND 9 (named -n 2, a forward zone)

With secondary=(ZONE2, PORT) each also takes ZONE2 from the primary on
PORT the way the resolver can (bench/peers.py, W4): unbound as an
auth-zone (for-downstream, for-upstream), BIND as a secondary zone,
pdns_recursor with zoneToCache (the zone put into its cache by AXFR and
refreshed every 10 s); kresd has no way, and forwards it to the primary.

Used by bench/peers.py and bench/scale_out.py (both import it; it imports
only testcode/harness)."""

import os
import shutil
import signal
import subprocess
import sys
import time

import dns.message
import dns.query
import dns.rcode

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "testcode"))
from harness.server import free_port, loopback_conf, stop_pid  # noqa: E402

CACHE_MB = 2048


def ready(port, name, timeout=60):
    """Wait until 127.0.0.1:port answers name with NOERROR."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            r = dns.query.udp(dns.message.make_query(name, "A"), "127.0.0.1",
                              port=port, timeout=0.5)
            if r.rcode() == dns.rcode.NOERROR and r.answer:
                return True
        except Exception:
            pass
        time.sleep(0.1)
    return False


class Resolver:
    """One resolver: start() by PID(s), stop() by PID(s); port; pids for
    CPU time; kind (its name in reports)."""

    kind = "?"

    def __init__(self, rundir, zone, nsd_port, secondary=None):
        self.dir = os.path.abspath(rundir)
        os.makedirs(self.dir, exist_ok=True)
        self.zone, self.nsd_port, self.secondary = zone, nsd_port, secondary
        self.port = free_port()
        self.procs = []
        self.logs = []

    def commands(self):
        raise NotImplementedError

    def start(self, timeout=60):
        for i, cmd in enumerate(self.commands()):
            log = open(os.path.join(self.dir, "out%d.log" % i), "w")
            self.logs.append(log)
            self.procs.append(subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                               cwd=self.dir))
        if not ready(self.port, "ready." + self.zone, timeout):
            text = self.read_logs()
            self.stop()
            raise RuntimeError("%s did not answer on port %d:\n%s" % (self.kind, self.port, text))
        return self

    @property
    def pids(self):
        return [p.pid for p in self.procs]

    def read_logs(self):
        text = ""
        for log in self.logs:
            with open(log.name, errors="replace") as f:
                text += f.read()[-3000:]
        return text

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            stop_pid(p, 30)
        for log in self.logs:
            log.close()
        self.procs, self.logs = [], []

    def notify_secondary(self):
        """Ask for the secondary zone now (NOTIFY or a reload); the resolvers
        without one return False."""
        return False

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


class UnboundResolver(Resolver):
    """build/fork or build/stock."""

    def __init__(self, build, kind, rundir, zone, nsd_port, secondary=None, threads=2,
                 server=()):
        super().__init__(rundir, zone, nsd_port, secondary)
        self.build, self.kind = os.path.abspath(build), kind
        self.conf = os.path.join(self.dir, "unbound.conf")
        clauses = ["stub-zone:", "\tname: \"%s\"" % zone,
                   "\tstub-addr: 127.0.0.1@%d" % nsd_port]
        if secondary:
            clauses += ["auth-zone:", "\tname: \"%s\"" % secondary[0],
                        "\tprimary: 127.0.0.1@%d" % secondary[1],
                        "\tzonefile: \"%s/secondary.zone\"" % self.dir,
                        "\tfor-downstream: yes", "\tfor-upstream: yes",
                        "\tfallback-enabled: no"]
        with open(self.conf, "w") as f:
            f.write(loopback_conf(self.dir, self.port, self.port + 1, threads=threads, server=[
                "qname-minimisation: no", "msg-cache-size: %dm" % (CACHE_MB // 3),
                "rrset-cache-size: %dm" % (CACHE_MB * 2 // 3),
                "num-queries-per-thread: 4096", "outgoing-range: 8192",
                "so-sndbuf: 4m"] + list(server), clauses=clauses))

    def commands(self):
        return [[os.path.join(self.build, "unbound"), "-d", "-c", self.conf]]

    def control(self, *args):
        return subprocess.run([os.path.join(self.build, "unbound-control"), "-c", self.conf]
                              + list(args), capture_output=True, text=True, timeout=60)

    def stats(self):
        out = self.control("stats_noreset").stdout
        return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)

    def notify_secondary(self):
        return self.control("auth_zone_transfer", self.secondary[0]).returncode == 0


class PdnsResolver(Resolver):
    kind = "pdns-recursor"

    def commands(self):
        args = ["pdns_recursor", "--config-dir=" + self.dir, "--socket-dir=" + self.dir,
                "--daemon=no", "--disable-syslog", "--loglevel=3", "--quiet=yes",
                "--local-address=127.0.0.1", "--local-port=%d" % self.port,
                "--query-local-address=127.0.0.1", "--threads=2",
                "--pdns-distributes-queries=no", "--reuseport=yes",
                "--dnssec=off", "--security-poll-suffix=",
                "--max-cache-entries=4000000", "--max-packetcache-entries=4000000",
                "--forward-zones=%s=127.0.0.1:%d" % (self.zone, self.nsd_port),
                "--forward-zones-recurse=.=127.0.0.1:9"]
        open(os.path.join(self.dir, "recursor.conf"), "w").close()
        if self.secondary:
            lua = os.path.join(self.dir, "zones.lua")
            with open(lua, "w") as f:
                f.write('zoneToCache("%s", "axfr", "127.0.0.1:%d", { refreshPeriod = 10 })\n'
                        % self.secondary)
            args.append("--lua-config-file=" + lua)
        return [args]


class KresdResolver(Resolver):
    kind = "knot-resolver"

    def commands(self):
        cache = os.path.join(self.dir, "cache")
        os.makedirs(cache, exist_ok=True)
        rules = ["policy.add(policy.suffix(policy.STUB('127.0.0.1@%d'), {todname('%s')}))"
                 % (self.nsd_port, self.zone)]
        if self.secondary:
            rules.append("policy.add(policy.suffix(policy.STUB('127.0.0.1@%d'), {todname('%s')}))"
                         % (self.secondary[1], self.secondary[0]))
        with open(os.path.join(self.dir, "kresd.conf"), "w") as f:
            f.write("\n".join([
                "net.listen('127.0.0.1', %d, { kind = 'dns' })" % self.port,
                "net.ipv6 = false",
                "net.outgoing_v4('127.0.0.1')",
                "cache.open(%d * MB, 'lmdb://%s')" % (CACHE_MB, cache),
                "trust_anchors.remove('.')",
                ] + rules + [
                "policy.add(policy.all(policy.STUB('127.0.0.1@9')))", ""]))
        # two processes share the port (SO_REUSEPORT) and the cache
        return [["kresd", "-n", "-q", "-c", os.path.join(self.dir, "kresd.conf"),
                 os.path.join(self.dir, "run%d" % i)] for i in range(2)]

    def start(self, timeout=60):
        for i in range(2):
            os.makedirs(os.path.join(self.dir, "run%d" % i), exist_ok=True)
        return super().start(timeout)


class BindResolver(Resolver):
    kind = "bind9"

    def commands(self):
        hints = os.path.join(self.dir, "root.hints")
        with open(hints, "w") as f:
            f.write(".\t3600000\tNS\tdead.\ndead.\t3600000\tA\t127.0.0.1\n")
        zones = ['zone "." { type hint; file "%s"; };' % hints,
                 'zone "%s" { type forward; forward only; forwarders { 127.0.0.1 port %d; }; };'
                 % (self.zone.rstrip("."), self.nsd_port)]
        if self.secondary:
            zones.append('zone "%s" { type secondary; primaries { 127.0.0.1 port %d; }; '
                         'file "%s/secondary.zone"; };'
                         % (self.secondary[0].rstrip("."), self.secondary[1], self.dir))
        conf = os.path.join(self.dir, "named.conf")
        with open(conf, "w") as f:
            f.write("""options {
	directory "%s";
	pid-file "%s/named.pid";
	listen-on port %d { 127.0.0.1; };
	listen-on-v6 { none; };
	query-source address 127.0.0.1;
	transfer-source 127.0.0.1;
	notify-source 127.0.0.1;
	recursion yes;
	allow-query { 127.0.0.0/8; };
	allow-recursion { 127.0.0.0/8; };
	allow-notify { 127.0.0.0/8; };
	dnssec-validation no;
	max-cache-size %dM;
	notify no;
	minimal-responses yes;
};
controls { };
%s
""" % (self.dir, self.dir, self.port, CACHE_MB, "\n".join(zones)))
        return [["named", "-g", "-n", "2", "-c", conf]]

    def notify_secondary(self):
        # named -g has no rndc here (controls { }): a NOTIFY from the
        # primary's address asks for the transfer
        from harness.zone import notify
        try:
            notify(self.port, self.secondary[0])
            return True
        except Exception:
            return False


def make(kind, rundir, zone, nsd_port, secondary=None, builds=None, server=()):
    """A resolver of kind fork, stock, pdns-recursor, knot-resolver or
    bind9. builds: {"fork": dir, "stock": dir}; server: more server:
    lines for unbound."""
    builds = builds or {"fork": os.path.join(TOP, "build", "fork"),
                        "stock": os.path.join(TOP, "build", "stock")}
    if kind in builds:
        return UnboundResolver(builds[kind], kind, rundir, zone, nsd_port, secondary,
                               server=server)
    cls = {"pdns-recursor": PdnsResolver, "knot-resolver": KresdResolver,
           "bind9": BindResolver}[kind]
    return cls(rundir, zone, nsd_port, secondary)


def installed(kind):
    """Whether the resolver's program is on this machine."""
    prog = {"pdns-recursor": "pdns_recursor", "knot-resolver": "kresd",
            "bind9": "named"}.get(kind)
    return prog is None or shutil.which(prog) is not None
