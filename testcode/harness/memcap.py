"""A memory limit for one server of a benchmark: a cgroup with the memory
controller (v2 where it is mounted with it, else v1's), which the server's
process joins before it execs, so that a build that needs more than the
limit is killed by the OOM killer inside the cgroup instead of taking the
machine down. Library use:

    cap = MemoryCap("rpz-scale-fork", 16 << 30)
    proc = subprocess.Popen(cap.wrap(cmd))
    ...
    cap.oom_kills()   # how many processes the limit killed
    cap.peak()        # the most memory the cgroup used, bytes
    cap.remove()      # after the processes are gone
"""

import os
import time

V2_ROOTS = ("/sys/fs/cgroup", "/sys/fs/cgroup/unified")
V1_ROOT = "/sys/fs/cgroup/memory"


def _memory_root():
    """(root directory, version) of a hierarchy with the memory controller."""
    for root in V2_ROOTS:
        try:
            with open(os.path.join(root, "cgroup.controllers")) as f:
                if "memory" in f.read().split():
                    return root, 2
        except OSError:
            pass
    if os.path.exists(os.path.join(V1_ROOT, "memory.limit_in_bytes")):
        return V1_ROOT, 1
    raise RuntimeError("no cgroup hierarchy with the memory controller")


class MemoryCap:
    """A cgroup named name with a memory limit of limit bytes (no swap)."""

    def __init__(self, name, limit):
        root, self.version = _memory_root()
        self.path = os.path.join(root, name)
        if os.path.isdir(self.path):
            os.rmdir(self.path)     # left by a run that was killed
        os.mkdir(self.path)
        self.limit = limit
        if self.version == 2:
            self._write("memory.max", str(limit))
            self._write("memory.swap.max", "0")
        else:
            self._write("memory.limit_in_bytes", str(limit))
            try:
                self._write("memory.memsw.limit_in_bytes", str(limit))
            except OSError:
                pass    # no swap accounting: the machine has no swap either

    def _write(self, name, value):
        with open(os.path.join(self.path, name), "w") as f:
            f.write(value)

    def wrap(self, cmd):
        """cmd, started so that it joins the cgroup before it runs."""
        return ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', self.path] + list(cmd)

    def oom_kills(self):
        """The processes the limit has killed (0 when the kernel does not say)."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        try:
            with open(os.path.join(self.path, name)) as f:
                for line in f:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        except OSError:
            pass
        return 0

    def peak(self):
        """The most memory the cgroup has used, in bytes (v2's memory.peak,
        v1's memory.max_usage_in_bytes), or None when the kernel does not
        say."""
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        try:
            with open(os.path.join(self.path, name)) as f:
                return int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def remove(self, timeout=10):
        """Remove the cgroup, once its processes have exited."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                os.rmdir(self.path)
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
