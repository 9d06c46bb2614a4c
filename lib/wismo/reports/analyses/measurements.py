"""The store that lets the notebooks of one `wismo report` share one measurement of the generated orders over MCP.

The build names a folder in WISMO_MEASUREMENTS (render/build.py: OUT/.measurements, emptied at the build's start);
the kernels inherit it. One entry per design and order size holds that design's tools/list and the raw tool turns
of its investigation, the file named by a hash of everything those turns depend on (the code of the servers, the
domain, the token counts, the design registry and the investigation, the fixtures, the MCP SDK's version, the size,
the cap, the seed). An entry is written to a temporary file and renamed into place, and read only when its
recorded key is the one asked for; whoever measures an entry holds its lock file (fcntl.flock) until it is
written, so a second notebook waits for it instead of measuring it again. Without the variable nothing is stored
or read.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from wismo.core import atomic
from wismo.core.paths import fixtures_dir
from wismo.core.walk import Call
from wismo.domain.pages import DEFAULT_CAP
from wismo.mcp.servers import designs

ENV = "WISMO_MEASUREMENTS"
FORMAT = 1  # the stored shape; a change of it changes every key
PACKAGE = Path(__file__).resolve().parents[2]  # lib/wismo
# What a server answers and how the investigation asks: the servers, the records they serve, the token counts the
# scoped server cuts its pages by, the design registry and the client that drives them.
SOURCE_PACKAGES = ("mcp/servers", "domain", "accounting/tokens", "core", "mcp/client")
# Servers start with only the variables the client gives them (mcp/client/connection.py), so no seed reaches them.
SEED = 0


def folder() -> Path | None:
    """The build's measurement folder (WISMO_MEASUREMENTS), or None: the notebook measures for itself."""
    value = os.environ.get(ENV)
    return Path(value) if value else None


def _files(root: Path) -> list[Path]:
    """Every file under `root` that can change an answer: Python sources and data, not bytecode."""
    return sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def source_digest(package: Path = PACKAGE, fixtures: Path | None = None) -> str:
    """A hash of the code and data the measured turns depend on (paths and contents; fixtures: fixtures_dir())."""
    h = hashlib.sha256()
    fixtures = fixtures or fixtures_dir()
    roots = [(f"wismo/{name}", package / name) for name in SOURCE_PACKAGES] + [("fixtures", fixtures)]
    # Designs registered by file (WISMO_DESIGNS) are served too.
    roots += [(f"design:{p}", Path(p)) for p in filter(None, designs.env().get(designs.ENV, "").split(os.pathsep))]
    for label, root in roots:
        for path in [root] if root.is_file() else _files(root):
            h.update(f"{label}/{path.relative_to(root) if path != root else ''}\0".encode())
            h.update(path.read_bytes())
            h.update(b"\0")
    h.update(f"mcp {metadata.version('mcp')}".encode())
    return h.hexdigest()


def effective_cap(cap: int | None) -> int:
    """The scoped cap a server started with this cap serves under (none given: its default)."""
    return DEFAULT_CAP if cap is None else int(cap)


def facts(design: str, lines: int, cap: int | None, digest: str) -> dict[str, object]:
    """Everything one entry's turns depend on."""
    return {
        "format": FORMAT,
        "design": design,
        "lines": lines,
        "cap": effective_cap(cap),
        "seed": SEED,
        "transport": "stdio",
        "sources": digest,
    }


def key(entry_facts: dict[str, object]) -> str:
    """The entry's name: a hash of its facts."""
    return hashlib.sha256(json.dumps(entry_facts, sort_keys=True).encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Measured:
    """One design's tools/list and the tool turns of its investigation of one generated order."""

    tools: list[dict[str, object]]
    turns: list[list[Call]]


def read(where: Path, name: str) -> Measured | None:
    """The stored entry `name`, or None when it is missing, partial, unreadable or stored under another key."""
    try:
        stored = json.loads((where / f"{name}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or stored.get("key") != name:
        return None
    tools, turns = stored.get("tools"), stored.get("turns")
    if not isinstance(tools, list) or not isinstance(turns, list) or not all(isinstance(t, list) for t in turns):
        return None
    return Measured(tools, turns)


def write(where: Path, name: str, entry_facts: dict[str, object], measured: Measured) -> Path:
    """Store an entry: written aside, then renamed into place, so no reader ever sees half of it."""
    where.mkdir(parents=True, exist_ok=True)
    target = where / f"{name}.json"
    stored = {"key": name, "facts": entry_facts, "tools": measured.tools, "turns": measured.turns}
    atomic.write_file(target, json.dumps(stored).encode("utf-8"))  # 0644: the build's other readers read it too
    return target


class Lock:
    """The exclusive lock on one entry (a lock file beside it): held by whoever measures the entry."""

    def __init__(self, where: Path, name: str) -> None:
        where.mkdir(parents=True, exist_ok=True)
        self._file = open(where / f"{name}.lock", "a")  # noqa: SIM115 (held open across the measurement)

    def take(self, wait: bool) -> bool:
        """Take the lock; without `wait`, False at once if someone else holds it."""
        try:
            fcntl.flock(self._file, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            return False
        return True

    def release(self) -> None:
        """Release the lock and close its file."""
        if not self._file.closed:
            fcntl.flock(self._file, fcntl.LOCK_UN)
            self._file.close()
