"""Benchmark 7: `wismo tokens` on a server with 100 tools (toolserver.py --tools 100), command start to exit,
beside that server's own start-up (spawn to an answered initialize, raw client) measured in the same run."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from wismo.bench.settings import Settings
from wismo.bench.stats import check_ratio, figure, median, summary
from wismo.core import processes
from wismo.mcp.client.raw import initialize, spawn_and_ask

TOOLS = 100
# Run by path, not with -m: its start is then a bare script's, importing no wismo package on the way.
SERVER = Path(__file__).with_name("toolserver.py")  # its --tools mode generates realistic tools
TARGET = "wismo tokens, 100-tool server, times its own start"


def server_command(tools: int = TOOLS) -> list[str]:
    """The tool server offering `tools` generated tools over stdio."""
    return [processes.interpreter(), str(SERVER), "--tools", str(tools)]


def _server_start(command: list[str]) -> float:
    """Spawn to initialize answered, raw client: the server's own start-up in ms."""
    elapsed, answer, err = spawn_and_ask(command, initialize())
    if b'"protocolVersion"' not in answer:
        raise RuntimeError(f"the {TOOLS}-tool tool server did not answer initialize: {answer[:200]!r} {err[-400:]}")
    return elapsed


def _wismo_tokens(command: list[str]) -> tuple[float, dict[str, object]]:
    """`wismo tokens --json` on `command`, command start to exit: ms, and the measurement it printed."""
    started = time.perf_counter()
    done = subprocess.run(
        [processes.interpreter(), "-m", "wismo", "tokens", "--json", "--", *command],
        capture_output=True,
        text=True,
        timeout=300,
    )
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise RuntimeError(f"wismo tokens on the {TOOLS}-tool tool server failed: {done.stderr[-1500:]}")
    return elapsed, json.loads(done.stdout)


def bench_tokens(s: Settings) -> dict[str, object]:
    """7. `wismo tokens` on 100 tools, as a ratio to that server's own start in the same run."""
    command = server_command()
    _server_start(command)  # unmeasured: bytecode written and file caches warm
    starts: list[float] = []
    runs: list[tuple[float, dict[str, Any]]] = []
    for _ in range(s.starts):
        starts.append(_server_start(command))
        runs.append(_wismo_tokens(command))
    walls = [ms for ms, _ in runs]
    keys = ("importMs", "connectMs", "listMs", "gatherMs", "waitMs", "countMs", "totalMs")
    inside = {k: median([m["timings"][k] for _, m in runs]) for k in keys}
    measured = runs[-1][1]
    start, wall = median(starts), median(walls)

    def why() -> str:
        return (
            f"wismo tokens took {wall:.0f} ms against the server's own {start:.0f} ms (medians): "
            f"{wall - inside['totalMs']:.0f} ms to start its interpreter, parse the arguments, print and end; it "
            f"imports the SDK ({inside['importMs']:.0f} ms), then starts the server and completes the handshake "
            f"({inside['connectMs']:.0f} ms) and lists its tools ({inside['listMs']:.0f} ms), {inside['gatherMs']:.0f} "
            f"ms to the server's exit in all, while a thread loads the two o200k_base encodings, tiktoken's and "
            f"openai-harmony's, and then counts the {TOOLS} tools ({inside['countMs']:.0f} ms); "
            f"{inside['waitMs']:.0f} ms more waiting for that thread. The import and the encodings are work of this "
            f"one process (one GIL), one after the other"
        )

    figures = [
        figure(
            f"floor: the {TOOLS}-tool server's own start, spawn to initialize answered", summary(starts, digits=1), None
        ),
        figure("wismo tokens --json on it, command start to exit", summary(walls, digits=1), start),
        figure(
            "  of which the SDK's import, then spawn to initialized, inside wismo tokens",
            summary([m["timings"]["importMs"] + m["timings"]["connectMs"] for _, m in runs], digits=1),
            start,
        ),
        figure(
            f"  of which counting {TOOLS} tools", summary([m["timings"]["countMs"] for _, m in runs], digits=1), start
        ),
    ]
    return {
        "title": f"7. wismo tokens on a {TOOLS}-tool server",
        "figures": figures,
        "tools": len(measured["tools"]),
        "definitionTokens": measured["definitions"]["harmony"]["total"],
        "insideMs": inside,
        "targets": [check_ratio(TARGET, wall, start, why)],
    }
