"""Benchmarks 1 and 2: one tools/call round trip, SDK client to our server, steady state, beside an echo floor;
the same server with a raw client (the server alone), and /proc's CPU split between client and server."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from wismo.bench.floors import echo_for, echo_name
from wismo.bench.procfs import child_pid, cpu_ms, per_call
from wismo.bench.settings import PROBE_ORDER, PROBES, SDK_TRANSPORT_ENV, Settings
from wismo.bench.stats import check, figure, median, summary
from wismo.mcp.client.process import client_env
from wismo.mcp.client.raw import RawHttp, RawServer, line, tools_call

ARGUMENTS = {"orderId": PROBE_ORDER}
Split = dict[str, float | None]


@dataclass(frozen=True)
class Variant:
    """One round-trip figure: which design and tool, which client, and the server's environment."""

    design: str
    tool: str
    client: str  # "sdk": the harness (SDK ClientSession); "raw": blocking JSON-RPC, the server alone
    env: tuple[tuple[str, str], ...] = ()
    label: str = ""

    @property
    def name(self) -> str:
        """The figure's name in the table."""
        who = "SDK client (harness)" if self.client == "sdk" else "raw client (server alone)"
        return f"{self.tool} ({self.design}), {who}{self.label}"


async def _sdk_session(v: Variant, transport: str, s: Settings) -> tuple[list[float], Split]:
    """Warm up, then time `s.calls` calls through the harness; the samples and CPU per call on each side."""
    from wismo.mcp.client.connection import connect

    async with connect(v.design, transport, dict(v.env) or None) as conn:
        for _ in range(s.warmup):
            await conn.call(v.tool, ARGUMENTS)
        pid = conn.process.pid if conn.process is not None else child_pid(f"serve {v.design}")
        server_before = cpu_ms(pid) if pid else None
        client_before = time.process_time()
        samples = []
        for _ in range(s.calls):
            result = await conn.call(v.tool, ARGUMENTS)
            if result.is_error:
                raise RuntimeError(f"{v.tool} failed in the benchmark: {result.text}")
            samples.append(conn.interactions[-1].elapsed_ms)
        client = (time.process_time() - client_before) * 1000 / s.calls
        server = per_call(server_before, cpu_ms(pid) if pid else None, s.calls)
    return samples, {"client": client, "server": server}


def _raw_session(v: Variant, transport: str, s: Settings) -> tuple[list[float], Split]:
    """The same with a raw blocking client: the server's share of the round trip."""
    if transport == "stdio":
        raw: RawServer | RawHttp = RawServer(v.design, env=_env(v), keep_stderr=False)
    else:
        raw = RawHttp(v.design)
    with raw:
        raw.checked_handshake()
        for _ in range(s.warmup):
            raw.timed_call(v.tool, ARGUMENTS)
        server_before = cpu_ms(raw.proc.pid)
        client_before = time.process_time()
        samples = [raw.timed_call(v.tool, ARGUMENTS) for _ in range(s.calls)]
        client = (time.process_time() - client_before) * 1000 / s.calls
        server = per_call(server_before, cpu_ms(raw.proc.pid), s.calls)
    return samples, {"client": client, "server": server}


def _env(v: Variant) -> dict[str, str]:
    """The stdio server's environment: what a client passes, and the variant's own switches."""
    return client_env() | dict(v.env)


def _cpu_split(cpu: list[Split]) -> Split:
    """Median CPU per call on the client and server side over the sessions."""
    out: Split = {}
    for side in ("client", "server"):
        values = [v for c in cpu if (v := c.get(side)) is not None]
        out[side] = round(median(values), 4) if values else None
    return out


def round_trip_variants(transport: str, s: Settings) -> list[Variant]:
    """The figures of a round-trip benchmark: per probe, the SDK client and the server alone; over stdio
    also both with the SDK's own threaded transport, the in-run 'before'."""
    variants = [Variant(d, t, c) for c in ("sdk", "raw") for d, t in PROBES]
    if transport == "stdio" and s.sdk_reference:
        variants += [
            Variant(d, t, c, tuple(SDK_TRANSPORT_ENV.items()), ", SDK threaded stdio transport")
            for c in ("sdk", "raw")
            for d, t in PROBES
        ]
    return variants


async def round_trips(transport: str, s: Settings) -> dict[str, object]:
    """Every variant of a transport, interleaved with its echo floor round by round; the figures."""
    rounds = s.rounds if transport == "stdio" else s.http_rounds
    variants = round_trip_variants(transport, s)
    samples: dict[Variant, list[float]] = {v: [] for v in variants}
    cpu: dict[Variant, list[Split]] = {v: [] for v in variants}
    floor: list[float] = []
    floor_cpu: list[float] = []
    payload = line(tools_call("get_order", ARGUMENTS))
    for _ in range(rounds):
        # Interleaved, so the floor and every figure see the same machine in the same minute.
        with echo_for(transport) as echo:
            got, echo_cpu = echo.measure(payload, s.warmup, s.calls)
        floor += got
        if echo_cpu is not None:
            floor_cpu.append(echo_cpu)
        for v in variants:
            got, split = await _sdk_session(v, transport, s) if v.client == "sdk" else _raw_session(v, transport, s)
            samples[v] += got
            cpu[v].append(split)
    floor_median = median(floor)
    figures = [
        figure(
            f"floor: {echo_name(transport)}",
            summary(floor),
            None,
            client="raw",
            cpuPerCallMs={"echo": round(median(floor_cpu), 4) if floor_cpu else None},
        )
    ]
    for v in variants:
        figures.append(
            figure(
                v.name,
                summary(samples[v]),
                floor_median,
                client=v.client,
                design=v.design,
                tool=v.tool,
                serverTransport="sdk-threaded" if v.env else "wismo",
                cpuPerCallMs=_cpu_split(cpu[v]),
            )
        )
    return {
        "figures": figures,
        "rounds": rounds,
        "warmupPerSession": s.warmup,
        "callsPerSession": s.calls,
        "order": PROBE_ORDER,
    }


def pick(result: dict[str, Any], tool: str, client: str, transport: str = "wismo") -> dict[str, Any] | None:
    """The figure of one tool, client and server transport, if measured."""
    return next(
        (
            f
            for f in result["figures"]
            if f.get("tool") == tool and f.get("client") == client and f.get("serverTransport") == transport
        ),
        None,
    )


def explain(result: dict[str, Any], worst: dict[str, Any]) -> str:
    """Why the slowest SDK-client figure costs what it does, from this run's own figures."""
    floor = result["figures"][0]["stats"]["median"]
    total = worst["stats"]["median"]
    parts = [f"{worst['name']}: median {total:.3f} ms against the floor's {floor:.3f} ms"]
    alone = pick(result, worst["tool"], "raw")
    if alone is not None:
        server = alone["stats"]["median"]
        parts.append(
            f"the same server with a raw client {server:.3f} ms, so the SDK client adds {total - server:.3f} ms"
        )
    split = worst["cpuPerCallMs"]
    if split.get("client") is not None and split.get("server") is not None:
        parts.append(f"CPU per call: SDK client {split['client']:.3f} ms, server {split['server']:.3f} ms")
    threaded = pick(result, worst["tool"], "sdk", "sdk-threaded")
    if threaded is not None:
        parts.append(
            f"with the SDK's threaded stdio transport the same call takes {threaded['stats']['median']:.3f} ms"
        )
    return "; ".join(parts)


def bench_stdio_round_trip(s: Settings) -> dict[str, object]:
    """1. One tools/call round trip over stdio, SDK client to our server, steady state, beside a raw pipe echo."""
    import anyio

    result = anyio.run(round_trips, "stdio", s)
    measured = [f for _, tool in PROBES if (f := pick(result, tool, "sdk")) is not None]
    worst = max(measured, key=lambda f: f["stats"]["median"])
    result["title"] = "1. tools/call round trip over stdio (steady state)"
    result["targets"] = [check("stdio round trip", worst["stats"]["median"], lambda: explain(result, worst))]
    return result


def bench_http_round_trip(s: Settings) -> dict[str, object]:
    """2. The same over Streamable HTTP on 127.0.0.1 (stateful, JSON responses), beside a raw HTTP echo."""
    import anyio

    result = anyio.run(round_trips, "http", s)
    result["title"] = "2. tools/call round trip over Streamable HTTP on 127.0.0.1 (steady state)"
    result["targets"] = []
    return result
