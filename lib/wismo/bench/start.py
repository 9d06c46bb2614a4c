"""Benchmark 3: server start, spawn to a completed handshake, beside a stock SDK server of the same tools
(bench/stock_server.py) and an interpreter that answers one line; and what dominates it: the imports (timed, and split
by package with -X importtime), the build, the rest."""

from __future__ import annotations

from typing import Any

from wismo.bench.child import probe
from wismo.bench.floors import echo_command
from wismo.bench.importtime import profile_start
from wismo.bench.settings import Settings
from wismo.bench.stats import check_ratio, figure, median, summary
from wismo.core import processes
from wismo.core.revision import PINNED_REVISION
from wismo.mcp.client.process import client_env, server_command
from wismo.mcp.client.raw import initialize, spawn_and_ask
from wismo.mcp.servers import designs

SDK_TYPES = "mcp_types"  # the SDK's protocol models, built at import
TARGET = "wismo serve start to handshake, times a stock SDK server's"


def stock_command(design: str) -> list[str]:
    """The stock SDK server of `design`'s tools (bench/stock_server.py)."""
    return [processes.interpreter(), "-m", "wismo.bench.stock_server", design]


async def _harness_start(design: str, transport: str) -> float:
    """Spawn to initialized through the harness (SDK client): its own start_ms."""
    from wismo.mcp.client.connection import connect

    async with connect(design, transport) as conn:
        return conn.start_ms


def _server_start(design: str, command: list[str] | None = None) -> float:
    """Spawn one stdio server (`design`'s, or `command`) and complete initialize with a raw client; the elapsed
    ms."""
    elapsed, answer, err = spawn_and_ask(command or server_command(design), initialize())
    if f'"protocolVersion":"{PINNED_REVISION}"'.encode() not in answer:
        raise RuntimeError(f"the {design} server did not complete the handshake: {answer[:200]!r} {err[-400:]}")
    return elapsed


def _explain(worst: float, breakdown: dict[str, float], types_ms: float, imports: dict[str, Any]) -> str:
    """Why a start costs what it does, from this run's own figures."""
    packages = ", ".join(f"{k} {v:.0f} ms" for k, v in list(imports["selfMsByPackage"].items())[:6])
    return (
        f"spawn to handshake {worst:.0f} ms = interpreter {breakdown['interpreterMs']:.0f} ms "
        f"+ imports {breakdown['importsMs']:.0f} ms + dataset and server "
        f"{breakdown['buildMs (dataset and server)']:.0f} ms + the rest "
        f"{breakdown['restMs (event loop, transport, handshake)']:.0f} ms. An interpreter that imports only "
        f"the SDK's protocol models ({SDK_TYPES}) and answers one line takes {types_ms:.0f} ms. Import self time "
        f"by package (-X importtime, which inflates it): {packages}; wismo's own modules "
        f"{imports['wismoSelfMs']:.0f} ms."
    )


def bench_server_start(s: Settings) -> dict[str, object]:
    """3. Spawn to a completed initialize, per design, beside an interpreter that answers one line."""
    import anyio

    raw: dict[str, list[float]] = {d: [] for d in designs.article()}
    floor: list[float] = []
    types_only: list[float] = []
    stock: list[float] = []
    harness: dict[str, list[float]] = {"stdio": [], "http": []}
    probes: list[dict[str, float]] = []
    for design in raw:  # unmeasured: bytecode written and file caches warm, as on any machine after the first start
        _server_start(design)
    for _ in range(s.starts):
        floor.append(spawn_and_ask(echo_command("once"), initialize())[0])
        types_only.append(spawn_and_ask(echo_command("once", SDK_TYPES), initialize())[0])
        stock.append(_server_start(designs.REFERENCE, stock_command(designs.REFERENCE)))
        for design in raw:
            raw[design].append(_server_start(design))
        for transport in harness:
            harness[transport].append(anyio.run(_harness_start, designs.REFERENCE, transport))
        probes.append(probe("start_probe", designs.REFERENCE, env=client_env(), cwd="/", timeout_s=120))
    imports = profile_start(server_command(designs.REFERENCE)[1:], s.importtime_runs)
    floor_median = median(floor)
    figures = [
        figure("floor: interpreter starts and answers one line", summary(floor, digits=2), None),
        figure(f"interpreter imports {SDK_TYPES} and answers one line", summary(types_only, digits=2), floor_median),
        figure(
            f"stock SDK server of {designs.REFERENCE}'s tools (MCPServer, SDK stdio): spawn to initialize answered",
            summary(stock, digits=2),
            floor_median,
        ),
    ]
    for design, samples in raw.items():
        figures.append(
            figure(
                f"stdio, {design}: spawn to initialize answered (raw client)", summary(samples, digits=2), floor_median
            )
        )
    names = {
        "stdio": "harness (SDK client), stdio: spawn to initialized",
        "http": "harness (SDK client), HTTP: spawn, listen, initialized",
    }
    for transport, samples in harness.items():
        figures.append(figure(names[transport], summary(samples, digits=2), floor_median))
    worst = max(median(v) for v in raw.values())
    reference = median(raw[designs.REFERENCE])
    imports_ms = median([p["importsMs"] for p in probes])
    build_ms = median([p["buildMs"] for p in probes])
    breakdown = {
        "interpreterMs": round(floor_median, 1),
        "importsMs": round(imports_ms, 1),
        "buildMs (dataset and server)": round(build_ms, 1),
        "restMs (event loop, transport, handshake)": round(worst - floor_median - imports_ms - build_ms, 1),
    }
    return {
        "title": "3. server start: spawn to a completed handshake",
        "figures": figures,
        "startsPerFigure": s.starts,
        "breakdown": breakdown,
        "imports": imports,
        "targets": [
            check_ratio(
                TARGET, reference, median(stock), lambda: _explain(worst, breakdown, median(types_only), imports)
            )
        ],
    }
