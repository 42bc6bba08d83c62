"""Stop one thread of a running unbound at a line of its source, with gdb
in non-stop mode, while its other threads run on: for a test that puts
an event in a window between two statements (fast_reload's, say).

gdb attaches, reading its commands from a pipe, so that it handles the
breakpoint meanwhile; the breakpoint's commands touch a file (hit) and
wait until the test makes another (go), then the thread goes on. The
line is found in the build's source (srcdir of its Makefile): the first
line after a line that contains a marker that starts with a given text.
The breakpoint names the file by its path in the source tree, not in
full: an object that ccache took from a build in another directory has
that directory in its debug information, and a full path does not match.
"""

import os
import re
import subprocess
import time


def source_line(builddir, path, marker, first):
    """path (relative to the source tree of builddir, returned as it is)
    and the number of the first line after the one line that contains
    marker whose text starts with first."""
    with open(os.path.join(builddir, "Makefile")) as f:
        src = re.search(r"^srcdir=(.*)$", f.read(), re.M).group(1).strip()
    full = os.path.join(src, path)
    with open(full) as f:
        lines = f.read().splitlines()
    at = [i for i, line in enumerate(lines) if marker in line]
    if len(at) != 1:
        raise RuntimeError("%s: %d lines with %r" % (full, len(at), marker))
    for i in range(at[0] + 1, len(lines)):
        if lines[i].strip().startswith(first):
            return path, i + 1
    raise RuntimeError("%s: no %r after %r" % (full, first, marker))


def stopped_threads(pid):
    """The threads of pid in a tracing stop."""
    out = []
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state == "t":
            out.append(tid)
    return out


class GdbStop:
    """gdb attached to pid, with a breakpoint at path:line; hit() is true
    once a thread stopped there, go() lets it go on (once), detach()
    ends gdb. The log file in workdir gets gdb's output. Raises
    RuntimeError when gdb cannot set the breakpoint (gdb is then
    detached): a test must not run its window without it, for until the
    breakpoint's commands are read every thread is stopped."""

    def __init__(self, pid, path, line, workdir, timeout=60):
        self.hitfile = os.path.join(workdir, "gdb.hit")
        self.gofile = os.path.join(workdir, "gdb.go")
        self.logfile = os.path.join(workdir, "gdb.log")
        self.log = open(self.logfile, "w")
        self.proc = subprocess.Popen(["gdb", "-q", "-nx"], stdin=subprocess.PIPE,
                                     stdout=self.log, stderr=subprocess.STDOUT,
                                     text=True)
        self.send(["set pagination off", "set confirm off", "set non-stop on",
                   # a traced thread stops at a signal, even one the
                   # daemon ignores (SIGPIPE), and in non-stop mode it
                   # would stay stopped: only the breakpoint stops one
                   "handle all nostop noprint pass",
                   "attach %d" % pid, "break %s:%d" % (path, line)])
        end = time.monotonic() + timeout
        while "Breakpoint 1 at" not in self.output():
            out = self.output()
            if time.monotonic() > end or "No source file" in out or "No line" in out:
                self.detach()
                raise RuntimeError("gdb did not set the breakpoint at %s:%d: %s"
                                   % (path, line, out[-500:]))
            time.sleep(0.1)
        # the breakpoint's commands wait for the test; gdb reads them
        # from the pipe, and handles the breakpoint meanwhile
        self.send(["commands 1", "shell touch %s" % self.hitfile,
                   "shell while [ ! -e %s ]; do sleep 0.05; done" % self.gofile,
                   "delete", "continue", "end", "continue -a &"])

    def send(self, commands):
        """Give gdb these command lines."""
        self.proc.stdin.write("\n".join(commands) + "\n")
        self.proc.stdin.flush()

    def hit(self):
        return os.path.exists(self.hitfile)

    def go(self):
        open(self.gofile, "w").close()

    def detach(self):
        """Let the thread go (if it is held) and end gdb."""
        if self.proc is None:
            return
        self.go()
        try:
            self.proc.stdin.write("detach\nquit\n")
            self.proc.stdin.close()
            self.proc.wait(30)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        self.proc = None
        self.log.close()

    def output(self):
        with open(self.logfile, errors="replace") as f:
            return f.read()
