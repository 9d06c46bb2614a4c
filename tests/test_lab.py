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
        ["make", "-s", "-n", "-o", ".venv/.wismo-installed", "-o", "notebook-filter", "lab", f"BIN={BIN}"],
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


def _send(ws: websocket.WebSocket, msg_type: str, content: dict) -> str:
    """Send one request on the kernel's shell channel over the server's websocket, as JupyterLab does; its id."""
    msg_id = uuid.uuid4().hex
    header = {"msg_id": msg_id, "session": uuid.uuid4().hex, "username": "test", "msg_type": msg_type, "version": "5.3"}
    ws.send(
        json.dumps(
            {
                "header": header,
                "parent_header": {},
                "metadata": {},
                "channel": "shell",
                "buffers": [],
                "content": content,
            }
        )
    )
    return msg_id


def _execute(ws: websocket.WebSocket, code: str, timeout: float = 60.0) -> tuple[list[dict], int | None]:
    """Execute code in a running kernel; the outputs as JupyterLab keeps them in the notebook, and the count."""
    msg_id = _send(
        ws,
        "execute_request",
        {"code": code, "silent": False, "store_history": True, "user_expressions": {}, "allow_stdin": False},
    )
    # Output arrives on iopub, the reply on shell, in no fixed order: done when both the reply and idle are in.
    outputs, count, replied, idle, deadline = [], None, False, False, time.monotonic() + timeout
    while not (replied and idle):
        if time.monotonic() > deadline:
            raise AssertionError(f"the kernel did not finish within {timeout:.0f} s: {code[:200]}")
        msg = json.loads(ws.recv())
        if msg.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        kind, content = msg["header"]["msg_type"], msg["content"]
        if kind == "stream":
            outputs.append({"output_type": "stream", "name": content["name"], "text": content["text"]})
        elif kind in ("display_data", "execute_result"):
            outputs.append({"output_type": kind, "data": content["data"], "metadata": content["metadata"]})
        elif kind == "error":
            raise AssertionError(f"kernel error: {content['ename']}: {content['evalue']}")
        elif kind == "execute_reply":
            count, replied = content.get("execution_count"), True
        idle |= kind == "status" and content["execution_state"] == "idle"
    return outputs, count


def _run(ws: websocket.WebSocket, code: str, timeout: float = 60.0) -> str:
    """Execute code in a running kernel; its stdout."""
    outputs, _ = _execute(ws, code, timeout)
    return "".join(o["text"] for o in outputs if o["output_type"] == "stream" and o["name"] == "stdout")


def _language_info(ws: websocket.WebSocket) -> dict:
    """The kernel's language_info, which JupyterLab writes into a notebook's metadata when it saves."""
    msg_id = _send(ws, "kernel_info_request", {})
    while True:
        msg = json.loads(ws.recv())
        if msg.get("parent_header", {}).get("msg_id") == msg_id and msg["header"]["msg_type"] == "kernel_info_reply":
            return msg["content"]["language_info"]


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["git", "-c", "user.name=test", "-c", "user.email=test@localhost", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def _working_copy(tmp_path: Path) -> Path:
    """A git working copy of the notebooks, with the notebook filter as `make` sets it up, all committed."""
    repo = tmp_path / "repo"
    (repo / "notebooks").mkdir(parents=True)
    for path in NOTEBOOKS.glob("*.ipynb"):
        (repo / "notebooks" / path.name).write_bytes(path.read_bytes())
    for kept in (".gitattributes", ".gitignore"):
        (repo / kept).write_bytes((ROOT / kept).read_bytes())
    assert _git(repo, "init", "-q").returncode == 0
    made = subprocess.run(
        ["make", "-s", "-o", ".venv/.wismo-installed", "notebook-filter", f"BIN={BIN}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "GIT_DIR": str(repo / ".git"), "GIT_WORK_TREE": str(repo)},
    )
    assert made.returncode == 0, made.stderr
    assert _git(repo, "add", "-A").returncode == 0 and _git(repo, "commit", "-qm", "notebooks").returncode == 0
    return repo


@pytest.mark.slow
def test_make_lab_runs_and_saves_notebooks_and_git_commits_only_their_source(tmp_path):
    env, argv = lab_command()
    repo = _working_copy(tmp_path)
    port, token = _free_port(), secrets.token_hex(16)
    log = (tmp_path / "lab.log").open("w+b")
    proc = subprocess.Popen(
        [*argv, f"--port={port}", "--ServerApp.port_retries=0", "--no-browser", f"--IdentityProvider.token={token}"],
        cwd=repo,  # `make lab` serves notebooks/ of the working copy it runs in: here, the test's own
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
        # Each notebook top to bottom, as stored, with papermill's own parameters cell after its parameters cell, then
        # saved with its outputs as JupyterLab saves it. 01 to 04 get an output folder (so the run leaves outputs/
        # alone) and fewer cases, sizes, transports and no hostile pass, as the report build runs them in full
        # (test_notebooks); 05 gets none, so it writes into a folder of its own run, which its last cell names.
        out = str(tmp_path / "outputs")
        runs = {
            "01-equivalence.ipynb": {"output_dir": out, "transports": ["stdio"], "hostile_count": 0},
            "02-context-cost.ipynb": {"output_dir": out, "orders": ["ORD-1004"], "scale_sizes": [1, 10]},
            "03-recorded-runs.ipynb": {"output_dir": out},
            "04-scale.ipynb": {"output_dir": out, "sizes": [1, 10], "budget_sizes": [10]},
            "05-traces.ipynb": {},
        }
        saved = {name: _run_and_save(base, auth, port, name, parameters, repo) for name, parameters in runs.items()}
        written = json.loads((tmp_path / "outputs" / "deterministic-comparison.json").read_text())
        assert written["transportParity"]["transports"] == ["stdio"] and written["summary"]["allEqual"]
        assert {r["lines"] for r in json.loads((tmp_path / "outputs" / "scale.json").read_text())["rows"]} == {1, 10}
        said = "".join(saved["05-traces.ipynb"][-1]["outputs"][0]["data"]["text/markdown"])
        folder = Path(re.search(r"`([^`]+)`", said).group(1))
        assert folder.name.startswith("traces-") and (folder / "traces.json").is_file(), said
        # What git would commit is the notebooks as they were: the filter strips what the run saved.
        for name in runs:
            assert '"output_type"' in (repo / "notebooks" / name).read_text(), f"{name} was not saved with its outputs"
        # (git status may still list a saved notebook until it is staged: only its stat changed, not what it commits.)
        diff = _git(repo, "diff", "--no-textconv", "--exit-code", "--", "notebooks")
        assert diff.returncode == 0, diff.stdout[-3000:]
        assert _git(repo, "add", "-A").returncode == 0
        staged = _git(repo, "diff", "--cached", "--no-textconv", "--exit-code")
        assert staged.returncode == 0, staged.stdout[-3000:]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
        log.close()


def _run_and_save(base: str, auth: str, port: int, name: str, parameters: dict, repo: Path) -> list[dict]:
    """Open a notebook as JupyterLab does (a session with the kernel its metadata names), run every code cell in
    order with papermill's parameters cell after the parameters cell, save it with its outputs, execution counts
    and the kernel's language_info through the contents API, as JupyterLab's save does; its cells as saved. Nothing
    may be written on stderr."""
    status, body = _get(
        f"{base}/api/sessions?{auth}",
        "POST",
        {"path": name, "type": "notebook", "name": "", "kernel": {"name": "python3"}},
    )
    assert status == 201, body
    session = json.loads(body)
    ws = websocket.create_connection(
        f"ws://127.0.0.1:{port}/api/kernels/{session['kernel']['id']}/channels?{auth}", timeout=30
    )
    try:
        out = _run(ws, "import os, sys, wismo.core.paths\nprint(sys.executable)\nprint(os.getcwd())")
        executable, cwd = out.split()
        assert Path(executable).parent == BIN and Path(cwd) == repo / "notebooks"
        injected = translate_parameters("python3", "python", parameters, "Parameters")
        nb = json.loads(_get(f"{base}/api/contents/{name}?{auth}")[1])["content"]
        for cell in (c for c in nb["cells"] if c["cell_type"] == "code"):
            cell["outputs"], cell["execution_count"] = _execute(ws, cell["source"], timeout=120)
            if "parameters" in cell["metadata"].get("tags", []):
                _execute(ws, injected)
            cell["metadata"]["scrolled"] = True  # a reader scrolled an output: JupyterLab keeps that in the file
            stderr = [o["text"] for o in cell["outputs"] if o.get("name") == "stderr"]
            assert not stderr, f"{name}: {cell['source'][:80]!r} wrote on stderr: {stderr}"
        nb["metadata"]["language_info"] = _language_info(ws)
        status, body = _get(
            f"{base}/api/contents/{name}?{auth}", "PUT", {"type": "notebook", "format": "json", "content": nb}
        )
        assert status == 200, body
        return nb["cells"]
    finally:
        ws.close()
        _get(f"{base}/api/sessions/{session['id']}?{auth}", "DELETE")
