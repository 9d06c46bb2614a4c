"""The trace files' conversations built as a partitioned pipeline, on local worker processes (`wismo traces --jobs
N`) or on a Dask cluster (`--dask tcp://HOST:PORT`): each file's spans read where a worker can reach the file, the
traces that name one conversation joined (a small graph gathered once), the spans sent to the worker of their
group (a shuffle on the conversation key), and each group's conversations built there as one pass builds them.

Conversations come back in the order of their first span (file, line, place in the line), whatever the cluster, so
a local run and a cluster run give the same analysis. A conversation is cut at an idle gap by its own spans' times,
where one pass also looks at the other conversations read meanwhile: the two differ only for a conversation with a
gap longer than the idle window within it."""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from dataclasses import fields
from typing import TYPE_CHECKING

from wismo.runs.traces import otlp
from wismo.runs.traces.conversations import TRACE_KEY, Conversation, Tally, conversations, named

if TYPE_CHECKING:
    from distributed import Client

Order = tuple[int, int, int]  # a span's place: its file's index, its line, its place among the line's spans
Placed = tuple[Order, otlp.Span]


def _read(index: int, path: str) -> list[Placed]:
    """One file's spans, each with its place (run on a worker)."""
    out: list[Placed] = []
    line, place = 0, 0
    for span in otlp.read(path):
        place = place + 1 if span.line == line else 0
        line = span.line
        out.append(((index, line, place), span))
    return out


def _edges(spans: list[Placed]) -> set[tuple[str, str]]:
    """Each trace id with the conversation a span of it names ("" for none) (run on a worker)."""
    return {(span.trace_id, named(span)) for _, span in spans}


def _groups(edges: set[tuple[str, str]]) -> dict[str, str]:
    """Each trace id's group: the traces joined by the conversations their spans name (union-find)."""
    parent: dict[str, str] = {}

    def root(node: str) -> str:
        while parent.setdefault(node, node) != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for trace, conversation in sorted(edges):
        a = root(f"{TRACE_KEY}{trace}")
        if conversation:
            b = root(f"conversation {conversation}")
            if a != b:
                parent[max(a, b)] = min(a, b)  # the smaller name leads: the same groups whatever the order
    return {trace: root(f"{TRACE_KEY}{trace}") for trace, _ in edges}


def _bucket(group: str, buckets: int) -> int:
    """The bucket (the worker's share) a group's spans go to: the same on every machine."""
    return zlib.crc32(group.encode("utf-8")) % buckets


def _split(spans: list[Placed], group_of: dict[str, str], buckets: int) -> list[list[Placed]]:
    """One file's spans by bucket (run on a worker)."""
    out: list[list[Placed]] = [[] for _ in range(buckets)]
    for placed in spans:
        out[_bucket(group_of[placed[1].trace_id], buckets)].append(placed)
    return out


def _build(pieces: list[list[Placed]], idle_ns: int) -> tuple[list[tuple[Order, Conversation]], Tally]:
    """A bucket's conversations, each with its first span's place, and what reading them saw (run on a worker)."""
    spans = sorted((placed for piece in pieces for placed in piece), key=lambda placed: placed[0])
    place = {(span.trace_id, span.span_id): order for order, span in spans}
    tally = Tally()
    built = []
    for conversation in conversations((span for _, span in spans), tally, idle_ns):
        calls = [c.span for c in conversation.model_calls] + [c.span for c in conversation.tool_calls]
        built.append((min(place[(s.trace_id, s.span_id)] for s in calls), conversation))
    return built, tally


def _add(into: Tally, tally: Tally) -> None:
    """A bucket's tally added to the run's."""
    for f in fields(Tally):
        setattr(into, f.name, getattr(into, f.name) + getattr(tally, f.name))


def run(client: Client, paths: Sequence[str], idle_ns: int, tally: Tally) -> Iterator[Conversation]:
    """The files' conversations built on `client`'s workers, in the order of their first span; what reading saw is
    added to `tally`."""
    buckets = max(1, len(client.scheduler_info()["workers"]))
    read = client.map(_read, range(len(paths)), list(paths), pure=False)
    edges: set[tuple[str, str]] = set()
    for found in client.gather(client.map(_edges, read)):
        edges |= found
    group_of = _groups(edges)
    [shared] = client.scatter([group_of], broadcast=True)  # one value (a dict would be scattered item by item)
    split = client.map(_split, read, group_of=shared, buckets=buckets)
    parts = [client.submit(lambda pieces, k: [p[k] for p in pieces], split, k) for k in range(buckets)]
    built = client.gather(client.map(_build, parts, idle_ns=idle_ns))
    for _, seen in built:
        _add(tally, seen)
    ordered = sorted((item for found, _ in built for item in found), key=lambda item: (item[0], item[1].key))
    for _, conversation in ordered:
        yield conversation
