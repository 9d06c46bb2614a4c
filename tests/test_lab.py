"""`make lab`: JupyterLab on 127.0.0.1 whose python3 kernel is this environment, started in the notebooks folder."""

import json
import os
import re
import secrets
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest
import websocket
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from papermill.translators import translate_parameters

from wismo.core.paths import NOTEBOOKS

# JupyterLab and its kernel as a user gets them from this environment, not the suite's forked kernels.
pytestmark = pytest.mark.usefixtures("real_servers")
ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
DEADLINE_S = 90.0
# Straight to 127.0.0.1, whatever proxy the environment names.
HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def lab_command() -> tuple[dict[str, str], list[str]]:
    """What `make lab` runs (printed by make, this environment as BIN): its VAR=value assignments, then its argv."""
    recipe = subprocess.run(
        ["make", "-s", "-n", "-o", ".venv/.wismo-installed", "lab", f"BIN={BIN}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout.strip()
    words = shlex.split(recipe)
    env = {}
    while re.fullmatch(r"[A-Z_]+=.*", words[0]):
        key, value = words.pop(0).split("=", 1)
        env[key] = value
    return env, words


def test_make_lab_listens_on_localhost_with_the_python3_kernel():
    _, argv = lab_command()
    assert argv[:2] == [str(BIN / "jupyter"), "lab"]
    assert "--ip" in argv and argv[argv.index("--ip") + 1] == "127.0.0.1"
    assert "--MappingKernelManager.default_kernel_name=python3" in argv
    assert ("--allow-root" in argv) == (os.geteuid() == 0)  # JupyterLab will not start as root without it


def test_python3_kernel_resolves_to_this_environment(monkeypatch):
    for key, value in lab_command()[0].items():
        monkeypatch.setenv(key, value)
    spec = KernelSpecManager().get_kernel_spec("python3")
    assert Path(spec.resource_dir).resolve().is_relative_to(Path(sys.prefix).resolve()), spec.resource_dir
    cmd = KernelManager(kernel_name="python3").format_kernel_cmd()
    assert cmd[0] == sys.executable and cmd[1:3] == ["-m", "ipykernel_launcher"], cmd
    for path in NOTEBOOKS.glob("*.ipynb"):
        assert json.loads(path.read_text())["metadata"]["kernelspec"]["name"] == "python3", path.name


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, method: str = "GET", body: dict | None = None) -> tuple[int, bytes]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with HTTP.open(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def _run(ws: websocket.WebSocket, code: str, timeout: float = 60.0) -> str:
    """Execute code in a running kernel over the server's websocket, as JupyterLab does; return its stdout."""
    session, msg_id = uuid.uuid4().hex, uuid.uuid4().hex
    ws.send(
        json.dumps(
            {
                "header": {
                    "msg_id": msg_id,
                    "session": session,
                    "username": "test",
                    "msg_type": "execute_request",
                    "version": "5.3",
                },
                "parent_header": {},
                "metadata": {},
                "channel": "shell",
                "buffers": [],
                "content": {
                    "code": code,
                    "silent": False,
                    "store_history": False,
                    "user_expressions": {},
                    "allow_stdin": False,
                },
            }
        )
    )
    # Output arrives on iopub, the reply on shell, in no fixed order: done when both the reply and idle are in.
    out, replied, idle, deadline = [], False, False, time.monotonic() + timeout
    while not (replied and idle):
        if time.monotonic() > deadline:
            raise AssertionError(f"the kernel did not finish within {timeout:.0f} s: {code[:200]}")
        msg = json.loads(ws.recv())
        if msg.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        kind = msg["header"]["msg_type"]
        if kind == "stream":
            out.append(msg["content"]["text"])
        elif kind == "error":
            raise AssertionError(f"kernel error: {msg['content']['ename']}: {msg['content']['evalue']}")
        replied |= kind == "execute_reply"
        idle |= kind == "status" and msg["content"]["execution_state"] == "idle"
    return "".join(out)


@pytest.mark.slow
def test_make_lab_serves_and_runs_a_notebook_top_to_bottom_in_this_environment(tmp_path):
    env, argv = lab_command()
    port, token = _free_port(), secrets.token_hex(16)
    log = (tmp_path / "lab.log").open("w+b")
    proc = subprocess.Popen(
        [*argv, f"--port={port}", "--ServerApp.port_retries=0", "--no-browser", f"--IdentityProvider.token={token}"],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env={**os.environ, **env, "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")},
    )
    base, auth = f"http://127.0.0.1:{port}", f"token={token}"
    try:
        deadline = time.monotonic() + DEADLINE_S
        while True:
            try:
                if _get(f"{base}/api")[0] == 200:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                pytest.fail(
                    f"jupyter lab did not answer within {DEADLINE_S:.0f} s: "
                    f"{log.read().decode(errors='replace')[-3000:]}"
                )
            time.sleep(0.3)
        status, page = _get(f"{base}/lab?{auth}")
        assert status == 200 and b"JupyterLab" in page
        specs = json.loads(_get(f"{base}/api/kernelspecs?{auth}")[1])
        assert specs["default"] == "python3" and "python3" in specs["kernelspecs"]
        listed = {item["name"] for item in json.loads(_get(f"{base}/api/contents?{auth}")[1])["content"]}
        assert {p.name for p in NOTEBOOKS.glob("*.ipynb")} <= listed
        # Open the first notebook as JupyterLab does: a session on its path with the kernel its metadata names.
        status, body = _get(
            f"{base}/api/sessions?{auth}",
            "POST",
            {"path": "01-equivalence.ipynb", "type": "notebook", "name": "", "kernel": {"name": "python3"}},
        )
        assert status == 201, body
        session = json.loads(body)
        ws = websocket.create_connection(
            f"ws://127.0.0.1:{port}/api/kernels/{session['kernel']['id']}/channels?{auth}", timeout=30
        )
        try:
            out = _run(
                ws,
                "import os, sys, "
                "wismo.core.paths\nprint(sys.executable)\nprint(os.getcwd())\nprint(wismo.core.paths.NOTEBOOKS)",
            )
            executable, cwd, notebooks = out.split()
            assert Path(executable).parent == BIN
            assert Path(cwd) == NOTEBOOKS and Path(notebooks) == NOTEBOOKS
            # Then every cell of the notebook, top to bottom, as stored, with papermill's own parameters cell after
            # its parameters cell: the output folder, so the run leaves outputs/ alone, and one transport with no
            # hostile pass, as the report build runs both in full (test_notebooks) and this checks the lab.
            parameters = {"output_dir": str(tmp_path / "outputs"), "transports": ["stdio"], "hostile_count": 0}
            injected = translate_parameters("python3", "python", parameters, "Parameters")
            nb = json.loads(_get(f"{base}/api/contents/01-equivalence.ipynb?{auth}")[1])["content"]
            for cell in (c for c in nb["cells"] if c["cell_type"] == "code"):
                _run(ws, cell["source"], timeout=120)
                if "parameters" in cell["metadata"].get("tags", []):
                    _run(ws, injected)
            written = json.loads((tmp_path / "outputs" / "deterministic-comparison.json").read_text())
            assert written["transportParity"]["transports"] == ["stdio"] and written["summary"]["allEqual"]
        finally:
            ws.close()
            _get(f"{base}/api/sessions/{session['id']}?{auth}", "DELETE")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
        log.close()
