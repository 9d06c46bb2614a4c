"""The test suite's forked servers (tests/forkserver.py): a server forked from the zygote runs on the launcher's pipes,
folder, environment and arguments, the launcher exits as the server did and passes signals on, and a killed
launcher takes its server with it."""

import json
import os
import select
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from wismo.core import processes

SCRIPT = textwrap.dedent(
    """
    import json, os, sys, time
    print(json.dumps({"pid": os.getpid(), "parent": os.getppid(), "cwd": os.getcwd(), "argv": sys.argv,
                      "said": os.environ.get("SAID"), "preloaded": "mcp.server.lowlevel.server" in sys.modules,
                      "line": sys.stdin.readline()}), flush=True)
    if sys.argv[1] == "sleep":
        time.sleep(60)
    print("to stderr", file=sys.stderr)
    sys.exit(int(sys.argv[2]))
    """
)


@pytest.fixture
def launcher():
    return os.environ[processes.INTERPRETER_ENV]


def _start(launcher, tmp_path, *args):
    script = tmp_path / "server.py"
    script.write_text(SCRIPT)
    return subprocess.Popen(
        [launcher, str(script), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env={"SAID": "hello", "PATH": os.environ.get("PATH", "")},
    )


def _said(process):
    process.stdin.write(b"a line\n")
    process.stdin.flush()
    return json.loads(process.stdout.readline())


def test_the_server_is_forked_from_the_zygote_and_runs_on_the_launchers_pipes_folder_and_environment(
    launcher, tmp_path
):
    process = _start(launcher, tmp_path, "exit", "3")
    said = _said(process)
    out, err = process.communicate(timeout=30)
    assert said["parent"] != process.pid and said["pid"] != process.pid  # a fork of the zygote, not the launcher
    assert said["preloaded"], "the SDK was not imported before the fork"
    assert said["cwd"] == str(tmp_path) and said["said"] == "hello" and said["line"] == "a line\n"
    assert said["argv"] == [str(tmp_path / "server.py"), "exit", "3"]
    assert process.returncode == 3 and err == b"to stderr\n" and out == b""


BACKEND = textwrap.dedent(
    """
    import json, os, sys
    import matplotlib
    print(json.dumps({"preloaded": [m for m in ("numpy", "pandas", "matplotlib.pyplot") if m in sys.modules],
                      "backend": matplotlib.rcParams._get_backend_or_none(),
                      "threads": len(os.listdir("/proc/self/task"))}))
    """
)


@pytest.mark.parametrize("backend", ["svg", None])
def test_a_kernels_libraries_are_preloaded_and_its_matplotlib_backend_is_its_own(launcher, tmp_path, backend):
    script = tmp_path / "backend.py"
    script.write_text(BACKEND)
    env = {"PATH": os.environ.get("PATH", "")} | ({"MPLBACKEND": backend} if backend else {})
    done = subprocess.run([launcher, str(script)], capture_output=True, env=env, timeout=30, check=True)
    said = json.loads(done.stdout)
    assert said["preloaded"] == ["numpy", "pandas", "matplotlib.pyplot"]
    # as if matplotlib were imported in the child: its MPLBACKEND, or none chosen yet (not the zygote's Agg)
    assert said["backend"] == backend and said["threads"] == 1


@pytest.mark.parametrize("backend", ["svg", None])
def test_a_forked_kernel_has_the_backend_a_real_one_would(monkeypatch, backend):
    from jupyter_client.manager import start_new_kernel

    import forkserver

    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"} | ({"MPLBACKEND": backend} if backend else {})
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel manager reads the environment too
    kernel, client = start_new_kernel(kernel_name="python3", env=env)
    said = []
    try:
        code = "import matplotlib, sys; print(matplotlib.get_backend(), 'pandas' in sys.modules)"
        client.execute_interactive(code, output_hook=lambda m: said.append(m["content"].get("text")), timeout=60)
    finally:
        client.stop_channels()
        kernel.shutdown_kernel(now=True)
    # forked (pandas imported before the kernel ran anything), with the backend its MPLBACKEND or ipykernel names
    assert "".join(filter(None, said)).split() == [backend or forkserver.INLINE, "True"]


def test_a_signal_to_the_launcher_reaches_the_server_and_the_launcher_ends_as_it_did(launcher, tmp_path):
    process = _start(launcher, tmp_path, "sleep", "0")
    server = _said(process)["pid"]
    process.send_signal(signal.SIGTERM)
    assert process.wait(30) == -signal.SIGTERM
    _gone(server)


def test_a_server_killed_outright_ends_its_launcher_by_the_same_signal(launcher, tmp_path):
    process = _start(launcher, tmp_path, "sleep", "0")
    os.kill(_said(process)["pid"], signal.SIGKILL)
    _, err = process.communicate(timeout=30)
    assert process.returncode == -signal.SIGKILL and err == b"", err


def test_a_malformed_request_keeps_none_of_its_descriptors(forked_servers, launcher, tmp_path):
    read, write = os.pipe()
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as channel:
        channel.connect(forked_servers)
        socket.send_fds(channel, [b"not json"], [write])
        assert channel.recv(64) == b""  # refused: the launcher would run the real interpreter
    os.close(write)
    process = _start(launcher, tmp_path, "exit", "0")  # a fork made after it must not hold the pipe either
    _said(process)
    process.communicate(timeout=30)
    readable, _, _ = select.select([read], [], [], 10)  # end of file once no copy of the write end is left
    assert readable and os.read(read, 1) == b"", "a copy of the write end is still open somewhere"
    os.close(read)


def test_a_launcher_killed_outright_takes_its_server_with_it(launcher, tmp_path):
    process = _start(launcher, tmp_path, "sleep", "0")
    server = _said(process)["pid"]
    process.kill()
    process.wait(30)
    _gone(server)


def test_a_launcher_gone_before_its_answer_leaves_the_zygote_serving(forked_servers, launcher, tmp_path):
    for _ in range(3):  # the zygote forks, finds nobody to tell the pid, and goes on
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as channel:
            channel.connect(forked_servers)
            request = {"argv": ["-c", "pass"], "cwd": str(tmp_path), "env": {}, "fds": [0, 1, 2]}
            with open(os.devnull, "rb") as null:
                socket.send_fds(channel, [json.dumps(request).encode()], [null.fileno()] * 3)
    process = _start(launcher, tmp_path, "exit", "0")
    said = _said(process)
    process.communicate(timeout=30)
    assert said["pid"] != process.pid, "the launcher ran the real interpreter: the zygote is gone"


def test_any_other_command_line_runs_the_real_interpreter(launcher):
    done = subprocess.run([launcher, "-c", "import sys; print(sys.executable)"], capture_output=True, timeout=60)
    assert done.returncode == 0 and done.stdout.decode().strip() == sys.executable


def _gone(pid):
    deadline = time.monotonic() + 10
    while processes.alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not processes.alive(pid), f"the server {pid} outlived its launcher"
