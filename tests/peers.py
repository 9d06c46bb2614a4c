"""The pinned MCP reference servers the studies run on, installed into .peers/ exactly as `make peers` installs them
(the Makefile's own targets, so the pins live in one place), once per run and under a lock: the workers of
`make test` may need them at the same moment."""

import fcntl
import re
import subprocess
from pathlib import Path

import pytest

from wismo.core.paths import REPO_ROOT

PEERS = REPO_ROOT / ".peers"
NPM_BIN = PEERS / "npm" / "node_modules" / ".bin"
GIT_SERVER = PEERS / "git" / "bin" / "mcp-server-git"
INSTALL_TIMEOUT_S = 600  # npm and pip from the registries; about 20 s here


def pin(name: str) -> str:
    """A version the Makefile pins (PEER_NPM, PEER_GIT, ...)."""
    found = re.search(rf"^{name}\s*:=\s*(\S+)", (REPO_ROOT / "Makefile").read_text(encoding="utf-8"), re.M)
    assert found, f"the Makefile no longer sets {name}"
    return found.group(1)


def installed(*targets: str) -> None:
    """`make TARGET...` (peer-npm, peer-git), under a lock; a failed install fails the test that needs it, saying
    what the install printed."""
    PEERS.mkdir(exist_ok=True)
    with open(PEERS / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run(
            ["make", "-s", *targets], cwd=REPO_ROOT, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S
        )
    if done.returncode != 0:
        pytest.fail(f"make {' '.join(targets)} failed: {(done.stdout + done.stderr)[-2000:]}")


def npm_version(package: str) -> str:
    """The version of an installed npm package (@modelcontextprotocol/server-memory, ...)."""
    import json

    path = PEERS / "npm" / "node_modules" / Path(package) / "package.json"
    return json.loads(path.read_text(encoding="utf-8"))["version"]
