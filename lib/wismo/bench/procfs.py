"""CPU and memory accounting from /proc (Linux): a round trip split into the client's, the server's and the rest,
and a probe's own peak memory."""

from __future__ import annotations

import os


def cpu_ms(pid: int) -> float | None:
    """CPU time of every thread of a process so far (ms, from /proc/PID/task/*/schedstat, ns resolution)."""
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return total / 1e6


def per_call(before: float | None, after: float | None, calls: int) -> float | None:
    """CPU ms per call between two readings of cpu_ms, or None when either reading failed."""
    return (after - before) / calls if before is not None and after is not None and calls else None


def child_pid(marker: str) -> int | None:
    """The newest child process of this one whose command line contains every word of `marker`."""
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if int(fields[1]) == os.getpid() and all(word in cmdline for word in marker.split()):
            found.append((int(fields[19]), int(entry)))  # start time, pid
    return max(found)[1] if found else None


def peak_rss_mb() -> float:
    """The peak resident set size of this process image so far, in MB: /proc's VmHWM, which starts afresh at exec
    (getrusage's ru_maxrss keeps the peak of the process that forked this one: a probe would report the benchmark's)."""
    with open("/proc/self/status", encoding="ascii") as status:
        line = next(line for line in status if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024
