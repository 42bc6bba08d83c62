"""Unbound on loopback for Unbound Steady's tests and benchmarks: free
ports, the loopback configuration every test and benchmark server starts
from, the built unbound with the demo config (make run's), queries,
statistics, and a stop by PID."""

import os
import signal
import socket
import struct
import subprocess
import threading
import time

import dns.message
import dns.query
import dns.rcode

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))


def read_pin(path=None):
    """The pinned base as a dict of base.pin's KEY=value lines: path, or
    $BASE_PIN (the pin scripts/build.sh reads), or base.pin at the top."""
    path = path or os.environ.get("BASE_PIN") or os.path.join(TOP, "base.pin")
    pin = {}
    with open(path) as f:
        for line in f:
            if "=" in line and not line.startswith("#"):
                k, v = line.strip().split("=", 1)
                pin[k] = v
    return pin


def stock_name():
    """What make stock builds, for reports: "stock 1.26.1" of the pin."""
    return "stock %s" % read_pin()["BASE_UPSTREAM_VERSION"]


def free_port():
    """A loopback port that is free for both UDP and TCP right now."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
            u.bind(("127.0.0.1", 0))
            port = u.getsockname()[1]
            try:
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as t:
                    t.bind(("127.0.0.1", port))
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as t:
                    t.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
            if port < 65000:
                return port


def stop_pid(proc, timeout):
    """Stop the process of a subprocess.Popen by its PID: SIGTERM, then
    SIGKILL if it has not exited after timeout seconds. Returns its exit
    status, or None if it had to be killed."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            return None
    return proc.returncode


def wait_running(server, timeout):
    """Wait until the unbound of server (with proc, control and read_log)
    answers unbound-control status: True, or False after timeout seconds;
    raises if it exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise RuntimeError("unbound exited at start-up:\n" + server.read_log())
        try:
            r = server.control("status", check=False)
        except subprocess.TimeoutExpired:
            # accepted but not answered: busy at start-up (reading a
            # zonefile of 10^7 records took over 30 s)
            continue
        if r.returncode == 0 and "is running" in r.stdout:
            return True
        time.sleep(0.1)
    return False


def loopback_conf(rundir, port, control_port, threads=2, verbosity=1,
                  server=(), extra="", clauses=()):
    """The text of an unbound.conf that keeps everything on 127.0.0.1:
    listens on port, runs in the foreground from rundir (pidfile, log),
    iterator only, extended statistics, remote control on control_port
    without certificates, and "." stubbed to a closed port so that no
    query leaves the machine. server: more server: lines (without the
    tab); extra: raw text appended to the server: clause; clauses: lines
    of the clauses that follow it (stub-zone:, auth-zone:, ...)."""
    lines = ["server:",
             "\tinterface: 127.0.0.1", "\tport: %d" % port,
             "\tdo-ip6: no", "\tdo-daemonize: no", "\tusername: \"\"",
             "\tchroot: \"\"", "\tdirectory: \"%s\"" % rundir,
             "\tpidfile: \"%s/unbound.pid\"" % rundir,
             "\tuse-syslog: no", "\tlogfile: \"%s/unbound.log\"" % rundir,
             "\tverbosity: %d" % verbosity,
             "\tnum-threads: %d" % threads,
             "\tso-reuseport: yes",
             "\tmodule-config: \"iterator\"",
             "\textended-statistics: yes",
             "\toutgoing-interface: 127.0.0.1",
             "\tdo-not-query-localhost: no",
             "\tso-rcvbuf: 4m"]
    lines += ["\t" + line for line in server]
    if extra:
        lines.append(extra)
    lines += ["stub-zone:", "\tname: \".\"", "\tstub-addr: 127.0.0.1@9"]
    lines += list(clauses)
    lines += ["remote-control:", "\tcontrol-enable: yes",
              "\tcontrol-interface: 127.0.0.1",
              "\tcontrol-port: %d" % control_port,
              "\tcontrol-use-cert: no"]
    return "\n".join(lines) + "\n"


def build_tool(src, d, *flags):
    """Compile the C tool src (a path, or the name of one in this
    directory: "dnsprobe", "spincount") into directory d; returns the
    executable's path. flags: -shared, -f... go before the source,
    libraries after it."""
    if os.sep not in src:
        src = os.path.join(HERE, src + ".c")
    name = os.path.splitext(os.path.basename(src))[0]
    pre = [f for f in flags if f.startswith("-f") or f == "-shared"]
    post = [f for f in flags if f not in pre]
    out = os.path.join(d, name + (".so" if "-shared" in flags else ""))
    subprocess.run(["cc", "-O2", "-Wall"] + pre + ["-o", out, src] + post, check=True)
    return out


def build_spincount(d):
    """Compile testcode/harness/spincount.c, the LD_PRELOAD spinlock counter, into
    directory d; returns the library's path."""
    return build_tool("spincount", d, "-shared", "-fPIC", "-ldl", "-lpthread")


def spincount_snapshot(out, n, binary):
    """Ask a process that runs with spincount.so (SPINCOUNT_OUT=out) for
    its snapshot number n; returns {initialising function: spin_lock
    calls}, the function names from binary's symbols (addr2line)."""
    open(out + ".req", "w").close()
    path = "%s.%d" % (out, n)
    for _ in range(250):
        if not os.path.exists(out + ".req") and os.path.exists(path):
            time.sleep(0.1)
            break
        time.sleep(0.02)
    else:
        raise RuntimeError("spincount wrote no snapshot")
    counts = {}
    with open(path) as f:
        rows = [line.split() for line in f if line.strip()]
    sites = sorted({r[0] for r in rows})
    names = {}
    if sites:
        res = subprocess.run(["addr2line", "-f", "-e", binary] + ["0x" + s for s in sites],
                             capture_output=True, text=True).stdout.splitlines()
        for i, site in enumerate(sites):
            names[site] = res[2 * i] if 2 * i < len(res) else "?"
    for site, c in rows:
        name = names.get(site, "?")
        counts[name] = counts.get(name, 0) + int(c)
    return counts


class Unbound:
    """One unbound process started from BUILDDIR with the demo config in
    RUNDIR. extra_conf is appended to the server: clause."""

    def __init__(self, builddir, rundir, extra_conf=""):
        self.builddir = os.path.abspath(builddir)
        self.rundir = os.path.abspath(rundir)
        self.port = free_port()
        self.control_port = self.port + 1
        self.conf = subprocess.check_output(
            [os.path.join(TOP, "scripts", "demo-conf.sh"), self.rundir,
             str(self.port), str(self.control_port)], text=True).strip()
        if extra_conf:
            with open(self.conf) as f:
                text = f.read()
            text = text.replace("server:\n", "server:\n" + extra_conf + "\n", 1)
            with open(self.conf, "w") as f:
                f.write(text)
        self.proc = None
        self.log = os.path.join(self.rundir, "unbound.log")

    def bin(self, name):
        return os.path.join(self.builddir, name)

    def start(self, timeout=20, wrapper=()):
        """Start unbound in the foreground; wrapper: a command line that
        runs it (a profiler such as valgrind), or nothing."""
        # checkconf warns that the root stub's loopback address is never
        # queried: that is the point, so only its errors are shown
        r = subprocess.run([self.bin("unbound-checkconf"), self.conf],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("unbound-checkconf failed:\n" + r.stdout + r.stderr)
        self.logf = open(self.log, "w")
        self.proc = subprocess.Popen(list(wrapper) + [self.bin("unbound"), "-d", "-c", self.conf],
                                     stdout=self.logf, stderr=subprocess.STDOUT)
        if wait_running(self, timeout):
            return self
        self.stop()
        raise RuntimeError("unbound did not come up:\n" + self.read_log())

    def read_log(self):
        with open(self.log) as f:
            return f.read()

    def control(self, *args, check=True):
        r = subprocess.run([self.bin("unbound-control"), "-c", self.conf] + list(args),
                           capture_output=True, text=True, timeout=30)
        if check and r.returncode != 0:
            raise RuntimeError("unbound-control %s failed: %s%s" % (
                " ".join(args), r.stdout, r.stderr))
        return r

    def stats(self, cmd="stats_noreset"):
        """The statistics as a dict name -> str value; every line must be
        exactly one name=value (as scrapers such as unbound_exporter need)."""
        out = self.control(cmd).stdout
        stats = {}
        for line in out.splitlines():
            name, sep, value = line.partition("=")
            assert sep and name and "=" not in value, "bad stats line %r" % line
            stats[name] = value
        return stats

    def query(self, name, rdtype="A", timeout=2.0):
        q = dns.message.make_query(name, rdtype)
        return dns.query.udp(q, "127.0.0.1", port=self.port, timeout=timeout)

    def stop(self, timeout=20):
        """Stop by PID with SIGTERM; returns the exit status."""
        if self.proc is None:
            return None
        rc = stop_pid(self.proc, timeout)
        self.logf.close()
        self.proc = None
        if rc is None:
            raise RuntimeError("unbound did not stop on SIGTERM")
        return rc

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


class WireServer:
    """A DNS server of a test on 127.0.0.1, UDP and TCP on one port, in
    threads of this process until stop(). A subclass answers each message
    in answer(data, over_tcp): the wire format of the reply, or None for
    none (over TCP the connection is then closed)."""

    def __init__(self):
        # the UDP port the kernel picks can be in use for TCP (a test
        # beside this one connects from it): then another one
        while True:
            self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self.udp.bind(("127.0.0.1", 0))
            self.port = self.udp.getsockname()[1]
            self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                self.tcp.bind(("127.0.0.1", self.port))
                break
            except OSError:
                self.tcp.close()
                self.udp.close()
        self.tcp.listen(16)
        self.running = True
        self.threads = [threading.Thread(target=f, daemon=True)
                        for f in (self._serve_udp, self._serve_tcp)]
        for t in self.threads:
            t.start()

    def answer(self, data, over_tcp):
        """The reply to the message data (wire format), or None."""
        raise NotImplementedError

    def _reply(self, data, over_tcp):
        # a test's server must not die of one odd message
        try:
            return self.answer(data, over_tcp)
        except Exception:
            return None

    def _serve_udp(self):
        while self.running:
            try:
                data, addr = self.udp.recvfrom(65535)
            except OSError:
                return
            r = self._reply(data, False)
            if r is not None:
                try:
                    self.udp.sendto(r, addr)
                except OSError:
                    pass

    def _serve_tcp(self):
        while self.running:
            try:
                conn, _ = self.tcp.accept()
            except OSError:
                return
            threading.Thread(target=self._serve_conn, args=(conn,),
                             daemon=True).start()

    def _serve_conn(self, conn):
        with conn:
            conn.settimeout(10)
            try:
                while True:
                    hdr = conn.recv(2, socket.MSG_WAITALL)
                    if len(hdr) < 2:
                        return
                    data = conn.recv(struct.unpack("!H", hdr)[0], socket.MSG_WAITALL)
                    r = self._reply(data, True)
                    if r is None:
                        return
                    conn.sendall(struct.pack("!H", len(r)) + r)
            except OSError:
                return

    def stop(self):
        """Close the sockets; the threads end with them."""
        self.running = False
        for sock in (self.udp, self.tcp):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()


def rcode_text(msg):
    return dns.rcode.to_text(msg.rcode())
