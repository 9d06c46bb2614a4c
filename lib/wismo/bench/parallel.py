"""Benchmark 8: both transports under the same load. N raw clients in parallel on one `wismo serve DESIGN --http`
server, each its own session; N `wismo serve DESIGN` processes over stdio, one raw client each. Every answer is
checked against its question, and each load stands beside one client alone, measured in the same run."""

from __future__ import annotations

import functools
import json
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar

from wismo.bench.procfs import cpu_ms
from wismo.bench.settings import PROBES, Settings
from wismo.bench.stats import check_count, check_ratio, figure, summary
from wismo.mcp.client.raw import HttpSession, RawHttp, RawServer

Session = RawServer | HttpSession
S = TypeVar("S", RawServer, HttpSession)
TARGET = {
    "http": "HTTP, N clients: median, times N calls alone",
    "stdio": "stdio, N servers: median, times N calls alone",
}
WRONG = "parallel load: wrong or missing answers"
BARRIER_S = 120.0  # warm-ups on a busy machine take seconds; a client that never gets there is an error


def order_ids() -> list[str]:
    """The dataset's orders, asked in turn: a client given another client's (or call's) answer is then caught."""
    from wismo.domain import dataset, ids

    return dataset.load().ids(ids.ORDER)


def order_id_of(record: object) -> object:
    """The order ID a lookup answered with: at the top (granular) or in its order (focused, scoped)."""
    if not isinstance(record, dict):
        return None
    inner = record.get("order")
    return record.get("orderId", inner.get("orderId") if isinstance(inner, dict) else None)


def wrong_answer(answer: bytes, asked: str, request_id: int) -> str | None:
    """Why `answer` is not a successful answer to request `request_id` for order `asked`; None when it is."""
    try:
        message = json.loads(answer)
        result = message["result"]
        if message.get("id") != request_id:
            return f"answer id {message.get('id')!r} to request {request_id}"
        if result.get("isError") is not False:
            return f"an error result for {asked}: {json.dumps(result)[:120]}"
        named = order_id_of(json.loads(result["content"][0]["text"]))
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return f"not a tool result: {answer[:120]!r}"
    return None if named == asked else f"order {named!r} answered for {asked}"


@dataclass
class Client:
    """One client's share of a phase: timed samples, every answer beside its question, the error that stopped it."""

    offset: int  # where in the orders this client starts, so that clients ask different orders at the same time
    samples: list[float] = field(default_factory=list)
    answers: list[tuple[str, int, bytes]] = field(default_factory=list)  # (order asked, request id, answer)
    error: str | None = None

    def ask(self, session: Session, tool: str, order: str) -> float:
        """One call, its answer kept for checking after the phase (parsing would steal CPU from the servers)."""
        elapsed, answer = session.call(tool, {"orderId": order})
        self.answers.append((order, session.next_id, answer))
        return elapsed


@dataclass
class Phase:
    """One client alone, or N at once (or rounds of either): what each client got, the timed wall time, and the CPU
    spent on each side."""

    clients: list[Client]
    asked: int  # answers expected, warm-up included
    wall_s: float
    server_cpu_ms: float | None
    client_cpu_ms: float
    failures: list[str] = field(default_factory=list)  # what went wrong beside the answers: a server's exit code
    width: int = 1  # clients at once

    @property
    def calls(self) -> int:
        """Timed calls answered."""
        return sum(len(c.samples) for c in self.clients)

    @cached_property
    def wrong(self) -> list[str]:
        """Every wrong answer's reason, one line per missing answer (a client stopped by an error), the failures."""
        reasons = [why for c in self.clients for q in c.answers if (why := wrong_answer(q[2], q[0], q[1]))]
        got = sum(len(c.answers) for c in self.clients)
        errors = [c.error for c in self.clients if c.error]
        return reasons + [f"missing ({'; '.join(errors) or 'no error raised'})"] * (self.asked - got) + self.failures

    def samples(self) -> list[float]:
        """Every timed call's latency, all clients together; an error naming why when none was timed."""
        got = [x for c in self.clients for x in c.samples]
        if not got:
            raise RuntimeError(f"no call was timed: {'; '.join(c.error or 'no error' for c in self.clients)}")
        return got


def _server_cpu(pids: Sequence[int]) -> float | None:
    """CPU ms so far of every server process, or None when /proc cannot tell."""
    readings = [r for pid in pids if (r := cpu_ms(pid)) is not None]
    return None if len(readings) < len(pids) else sum(readings)


def run_phase(
    sessions: Sequence[Session], pids: Sequence[int], tool: str, orders: Sequence[str], warmup: int, calls: int
) -> Phase:
    """Every session (handshake done) in its own thread: warm-up, then all together, from one barrier, the timed
    calls."""
    clients = [Client(i) for i in range(len(sessions))]
    marks: list[tuple[float | None, float, float]] = []

    def mark() -> None:
        # Run by the barrier once every party is in and before any is released: the clock starts before the first
        # timed call, however late the scheduler wakes this thread (read after the release, a loaded machine could
        # start it once the calls were done).
        marks.append((_server_cpu(pids), time.process_time(), time.perf_counter()))

    barrier = threading.Barrier(len(sessions) + 1, action=mark, timeout=BARRIER_S)

    def drive(session: Session, c: Client) -> None:
        try:
            for k in range(warmup):
                c.ask(session, tool, orders[(c.offset + k) % len(orders)])
            barrier.wait()
            for k in range(calls):
                c.samples.append(c.ask(session, tool, orders[(c.offset + k) % len(orders)]))
        except Exception as e:  # any failure is this client's result, its answers counted as missing
            c.error = f"{type(e).__name__}: {e}"
            barrier.abort()

    threads = [threading.Thread(target=drive, args=(x, c), daemon=True) for x, c in zip(sessions, clients)]
    for t in threads:
        t.start()
    try:
        barrier.wait()
    except threading.BrokenBarrierError:
        mark()  # a client failed before the timed calls: its error is in its result
    server_before, client_before, started = marks[0]
    for t in threads:
        t.join()
    wall_s = time.perf_counter() - started
    server_after = _server_cpu(pids)
    server = server_after - server_before if server_before is not None and server_after is not None else None
    asked = len(sessions) * (warmup + calls)
    return Phase(clients, asked, wall_s, server, (time.process_time() - client_before) * 1000, [], len(sessions))


def pooled(phases: Sequence[Phase]) -> Phase:
    """Rounds of the same phase as one: every client's calls and answers, the wall and CPU times summed."""
    cpu = [p.server_cpu_ms for p in phases]
    return Phase(
        [c for p in phases for c in p.clients],
        sum(p.asked for p in phases),
        sum(p.wall_s for p in phases),
        None if None in cpu else sum(c for c in cpu if c is not None),
        sum(p.client_cpu_ms for p in phases),
        [f for p in phases for f in p.failures],
        phases[0].width,
    )


def rounds(
    alone: Session, sessions: Sequence[Session], pids: Sequence[int], tool: str, orders: Sequence[str], s: Settings
) -> tuple[Phase, Phase]:
    """Rounds of one client alone, then N at once, interleaved so that both see the machine in the same minutes;
    alone it makes as many calls as all N together, so that both phases do the same work and last about as long."""
    got: tuple[list[Phase], list[Phase]] = ([], [])
    for _ in range(s.parallel_rounds):
        got[0].append(run_phase([alone], pids[:1], tool, orders, s.parallel_warmup, len(sessions) * s.parallel_calls))
        got[1].append(run_phase(sessions, pids, tool, orders, s.parallel_warmup, s.parallel_calls))
    return pooled(got[0]), pooled(got[1])


def _opened(session: S, into: list[S]) -> None:
    """Complete a session's handshake and keep it, so that it is closed whatever happens next."""
    into.append(session)
    session.checked_handshake()


def http_phases(design: str, tool: str, orders: Sequence[str], s: Settings) -> tuple[Phase, Phase]:
    """One HTTP server: its first session alone, and N further sessions (their own connections) at once."""
    with RawHttp(design) as server:
        server.checked_handshake()
        sessions: list[HttpSession] = []
        try:
            for _ in range(s.parallel_clients):
                _opened(HttpSession(design, server.port), sessions)
            return rounds(server, sessions, [server.proc.pid], tool, orders, s)
        finally:
            for x in sessions:
                x.close()


def stdio_phases(design: str, tool: str, orders: Sequence[str], s: Settings) -> tuple[Phase, Phase]:
    """N stdio servers, each with its client: the first alone, and all N at once."""
    servers: list[RawServer] = []
    try:
        for _ in range(s.parallel_clients):
            # One after another: eight starting at once on a busy 2-core machine missed the 15 s handshake deadline.
            _opened(RawServer(design, keep_stderr=False), servers)
        alone, loaded = rounds(servers[0], servers, [x.proc.pid for x in servers], tool, orders, s)
    finally:
        codes = [x.close() for x in servers]
    loaded.failures += [f"a {design} stdio server exited with {code} on EOF" for code in codes if code != 0]
    return alone, loaded


def _details(p: Phase) -> dict[str, object]:
    """Throughput and CPU of a phase, beside its figure."""

    def per_call(ms: float | None) -> float | None:
        return round(ms / p.calls, 4) if ms is not None and p.calls else None

    return {
        "clients": p.width,
        "calls": p.calls,
        "wallSeconds": round(p.wall_s, 3),
        "callsPerSecond": round(p.calls / p.wall_s, 1) if p.wall_s else None,
        "serverCpuMsPerCall": per_call(p.server_cpu_ms),
        "clientCpuMsPerCall": per_call(p.client_cpu_ms),
        # What the machine gave these processes: below its cores, other work had the rest.
        "coresBusy": round((p.server_cpu_ms + p.client_cpu_ms) / 1000 / p.wall_s, 2)
        if p.server_cpu_ms is not None and p.wall_s
        else None,
        "answersChecked": sum(len(c.answers) for c in p.clients),
        "wrongAnswers": len(p.wrong),
    }


PHASES = {"http": http_phases, "stdio": stdio_phases}
WHO = {"http": "{n} clients in parallel on one HTTP server", "stdio": "{n} stdio servers in parallel, a client each"}


def explain(alone: dict[str, Any], loaded: dict[str, Any], cpus: int | None) -> str:
    """Why N clients' median is above N calls alone, from the run's own figures: throughput and where the CPU went."""
    n = loaded["clients"]
    parts = [
        f"{loaded['name']}: median {loaded['stats']['median']:.3f} ms against {n} x {alone['stats']['median']:.3f} ms "
        f"alone; {loaded['callsPerSecond']} calls/s against {alone['callsPerSecond']} calls/s alone"
    ]
    server, before = loaded["serverCpuMsPerCall"], alone["serverCpuMsPerCall"]
    if server is not None and before:
        parts.append(
            f"server CPU per call {server:.3f} ms under load against {before:.3f} ms alone "
            f"({100 * (server - before) / before:+.0f}%)"
        )
    if loaded["coresBusy"] is not None:
        parts.append(f"the servers and clients had {loaded['coresBusy']:.2f} of the machine's {cpus} cores")
    return "; ".join(parts)


def bench_parallel_load(s: Settings) -> dict[str, object]:
    """8. N clients in parallel over HTTP (one server) and over stdio (N servers), every answer checked, each beside
    one client alone on the same transport in the same run."""
    if not any(design in s.parallel_designs for design, _ in PROBES):
        raise ValueError(f"parallel_designs {s.parallel_designs} names none of {[d for d, _ in PROBES]}")
    orders = order_ids()
    figures: list[dict[str, Any]] = []
    pairs: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {t: [] for t in PHASES}
    wrong: list[str] = []
    for transport, phases in PHASES.items():
        for design, tool in (p for p in PROBES if p[0] in s.parallel_designs):
            alone, loaded = phases(design, tool, orders, s)
            base = {"transport": transport, "design": design, "tool": tool}
            one = figure(f"{tool} ({design}) over {transport}, one client alone", summary(alone.samples()), None)
            many = figure(
                f"{tool} ({design}), {WHO[transport].format(n=loaded.width)}",
                summary(loaded.samples()),
                one["stats"]["median"],
            )
            one, many = one | base | _details(alone), many | base | _details(loaded)
            figures += [one, many]
            pairs[transport].append((one, many))
            wrong += alone.wrong + loaded.wrong
    targets = []
    for transport, measured in pairs.items():
        one, many = max(measured, key=lambda p: p[1]["stats"]["median"] / p[0]["stats"]["median"])
        queued = many["clients"] * one["stats"]["median"]
        targets.append(
            check_ratio(
                TARGET[transport],
                many["stats"]["median"],
                queued,
                functools.partial(explain, one, many, os.cpu_count()),
            )
        )
    checked = sum(f["answersChecked"] for f in figures)
    asked = checked + sum(1 for w in wrong if w.startswith("missing"))
    targets.append(check_count(WRONG, len(wrong), asked, lambda: f"{len(wrong)} of {asked}: " + "; ".join(wrong[:3])))
    return {
        "title": f"8. {s.parallel_clients} clients at once: one HTTP server; stdio, a server each (answers checked)",
        "figures": figures,
        "clients": s.parallel_clients,
        "callsPerClient": s.parallel_calls,
        "warmupPerClient": s.parallel_warmup,
        "rounds": s.parallel_rounds,
        "orders": orders,
        "answersChecked": checked,
        "wrongAnswers": len(wrong),
        "wrongExamples": wrong[:5],
        "targets": targets,
    }
