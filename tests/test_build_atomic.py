"""Processes below this one, stopped together, and children that end with the process that started them: what lets a
build stop every kernel and MCP server it started when it is interrupted, or killed."""

import subprocess
import sys
import time

import psutil
import pytest

from wismo.core import processes

# ---------------------------------------------------------------------------------------------------------------
# Processes below this one, stopped together; a child that ends with the thread that started it.


def _sleeper(*, session=False, preexec_fn=None):
    return subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=session, preexec_fn=preexec_fn
    )


def test_every_process_below_this_one_is_stopped_also_in_a_session_of_its_own():
    shell = subprocess.Popen(["sh", "-c", "sleep 120 & sleep 120 & wait"])
    alone = _sleeper(session=True)
    deadline = time.monotonic() + 30
    while len(processes.descendants(shell.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)  # the shell starts its two sleeps
    below = processes.descendants()
    assert {shell.pid, alone.pid} | processes.descendants(shell.pid) <= below
    stopped = processes.stop_descendants()
    assert below <= stopped and not any(processes.alive(p) for p in stopped)
    shell.wait()
    alone.wait()


def test_a_child_started_to_end_with_its_parent_ends_when_the_parent_is_killed(tmp_path):
    pid_file = tmp_path / "grandchild"
    code = (
        "import subprocess, sys, time\nfrom wismo.core import processes\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'], start_new_session=True, "
        "preexec_fn=processes.ends_with_parent())\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\ntime.sleep(120)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    grandchild = psutil.Process(int(pid_file.read_text()))
    parent.kill()
    parent.wait()
    try:
        grandchild.wait(timeout=30)  # SIGTERM from the kernel as its parent ended; no one else stops it
    except psutil.TimeoutExpired:
        grandchild.kill()
        pytest.fail("the child outlived its parent")
