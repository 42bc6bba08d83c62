"""Stop one thread of a running unbound at a line of its source, with gdb
in non-stop mode, while its other threads run on: for a test that puts
an event in a window between two statements (fast_reload's, say).

gdb attaches, reading its commands from a pipe, so that it handles the
breakpoint meanwhile; the breakpoint's commands touch a file (hit) and
wait until the test makes another (go), then the thread goes on. The
line is found in the build's source (srcdir of its Makefile): the first
line after a line that contains a marker that starts with a given text.
"""

import os
import re
import subprocess


def source_line(builddir, path, marker, first):
    """The source file path (relative to the source tree of builddir)
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
            return full, i + 1
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
    ends gdb. logfile gets gdb's output."""

    def __init__(self, pid, path, line, workdir):
        self.hitfile = os.path.join(workdir, "gdb.hit")
        self.gofile = os.path.join(workdir, "gdb.go")
        self.logfile = os.path.join(workdir, "gdb.log")
        self.log = open(self.logfile, "w")
        self.proc = subprocess.Popen(["gdb", "-q", "-nx"], stdin=subprocess.PIPE,
                                     stdout=self.log, stderr=subprocess.STDOUT,
                                     text=True)
        self.proc.stdin.write("\n".join([
            "set pagination off", "set confirm off", "set non-stop on",
            "attach %d" % pid,
            "break %s:%d" % (path, line),
            "commands", "shell touch %s" % self.hitfile,
            "shell while [ ! -e %s ]; do sleep 0.05; done" % self.gofile,
            "delete", "continue", "end",
            "continue -a &", ""]))
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
