"""The trace files analysed as a partitioned pipeline, on local worker processes (`wismo traces --jobs N`) or on a
Dask cluster (`--dask tcp://HOST:PORT`), where a worker reaches the files:

1. the files are cut into parts (an uncompressed file of the Collector's lines into byte ranges of CHUNK, any other
   file whole), and each part is read for the conversations its traces name (a small graph, gathered once);
2. the traces that name one conversation are joined, and the groups found in more than one part marked;
3. each part is read again, and its conversations built there as one pass builds them, each reduced to what it
   adds to its chain (chains.Facts); the spans of marked groups are set aside;
4. the set-aside spans are sent to the worker of their group (a shuffle on the conversation key), and each such
   group built there alone;
5. the facts come back, small beside the spans, one part's at a time, in the order of their conversations' first
   call (file, line, conversation key), and are counted into the chains' histograms here: this process holds the
   shared groups' facts and one part's, not the run's. The conversations themselves come back only when asked for
   (the imported runs need them).

The parts depend on the files alone, not on the workers, so any number of workers, local or on a cluster, gives the
same analysis. One pass in one process gives the same but where a conversation lies idle for longer than the idle
window within it (one pass cuts it, the pipeline may not), and it takes the conversations in the order they complete,
which differs from the order of their first call where they overlap: which three are a chain's examples and which
twelve its cases may then differ. A bad line is the first in file order either way."""

from __future__ import annotations

import heapq
import os
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import fields
from typing import TYPE_CHECKING, NamedTuple

from wismo.runs.traces import otlp
from wismo.runs.traces.chains import READ, Facts, facts
from wismo.runs.traces.conventions import CONVERSATION
from wismo.runs.traces.conversations import TRACE_KEY, Conversation, Tally, conversations
from wismo.runs.traces.prediction import Replacement

if TYPE_CHECKING:
    from distributed import Client, LocalCluster

CHUNK = 16 * 2**20  # bytes: an uncompressed file of lines larger than this is read in ranges of this size


def local_cluster(workers: int) -> LocalCluster:
    """A Dask cluster of `workers` processes on this machine, one thread each, for the pipeline (`--jobs N`): no
    dashboard, and the scheduler's HTTP server on a free port, not Dask's 8787, which another cluster may hold. Its
    processes leave a Ctrl-C to this one, which stops them in order through the cluster's close (processes.started_
    apart): interrupted themselves, each printed its tracebacks, and a cluster left half started failed Dask's exit."""
    from distributed import LocalCluster

    from wismo.core.processes import started_apart

    return started_apart(
        lambda: LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            dashboard_address=None,
            scheduler_kwargs={"dashboard_address": ":0"},
        ),
        lambda cluster: cluster.close(),
    )


Order = tuple[int, int, str, str]  # a conversation's place: its first call's file (index) and line, its key, the span
Found = tuple[Order, Facts, Conversation | None]
Problem = tuple[tuple[int, int], str, int, str]  # (file index, line) to order by, then the path, line and problem


class Part(NamedTuple):
    """What one task reads: a whole file (`end` None), or the lines that start in bytes [start, end) of one."""

    file: int  # the file's index among those given
    path: str
    start: int
    end: int | None


class Scan(NamedTuple):
    """What reading a part found: its lines, each trace with the conversation a span of it names, and why it could
    not be read (its line counted from the part's first), if it could not."""

    lines: int
    edges: set[tuple[str, str]]
    problem: tuple[int, str, str] | None = None  # (line in the part, path, problem)


class Built(NamedTuple):
    """A part's conversations reduced to their facts (with the conversations when kept), the spans of the groups
    other parts share (with their file's index), what reading saw, and the first bad line."""

    found: list[Found]
    aside: list[tuple[int, otlp.Span]]
    tally: Tally
    problem: Problem | None


def _size(path: str) -> int | None:
    """A file's size in bytes, None where it cannot be had."""
    try:
        if otlp.remote(path):
            import fsspec

            filesystem, inner = fsspec.core.url_to_fs(path)
            return int(filesystem.size(inner))
        return os.path.getsize(path)
    except (OSError, ValueError, ImportError):
        return None  # read whole: reading it says what is wrong


def plan(paths: Sequence[str], chunk: int = CHUNK) -> list[Part]:
    """The parts the files are read in (run on a worker: it reaches the files)."""
    out: list[Part] = []
    for index, path in enumerate(paths):
        size = _size(path)
        if size is None or size <= chunk or otlp.compressed(path) or not otlp.lines_start(path):
            out.append(Part(index, path, 0, None))
            continue
        out += [Part(index, path, start, min(start + chunk, size)) for start in range(0, size, chunk)]
    return out


def _read(part: Part, first_line: int) -> Iterator[otlp.Span]:
    return otlp.read(part.path) if part.end is None else otlp.read(part.path, part.start, part.end, first_line)


def _scan(part: Part) -> Scan:
    """Each trace of a part with the conversation a span of it names ("" for none), read without making spans (run
    on a worker)."""
    try:
        found, lines = otlp.traced(part.path, CONVERSATION, part.start, part.end)
    except otlp.TraceUnreadable as exc:
        return Scan(0, set(), (exc.line, exc.path, exc.problem))
    return Scan(lines, {(trace, str(value or "")) for trace, value in found})


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


def _order(conversation: Conversation, file_of: dict[str, int]) -> Order:
    """Where a conversation's first call is: (file index, line), then its key and that call's span id."""
    spans = [c.span for c in conversation.model_calls] + [c.span for c in conversation.tool_calls]
    file, line, span_id = min((file_of[s.path], s.line, s.span_id) for s in spans)
    return file, line, conversation.key, span_id


def _problem(exc: otlp.TraceUnreadable, file: int) -> Problem:
    return (file, exc.line), exc.path, exc.line, exc.problem


def _build(
    part: Part,
    first_line: int,
    shared: set[str],
    idle_ns: int,
    replacements: Sequence[Replacement],
    keep: bool,
) -> Built:
    """A part's conversations as facts, the spans of the traces in `shared` (groups other parts share) set aside
    (run on a worker)."""
    tally, found, aside = Tally(), [], []
    file_of = {otlp.named(part.path): part.file}

    def own() -> Iterator[otlp.Span]:
        for span in _read(part, first_line):
            if span.trace_id in shared:
                aside.append((part.file, span))
            else:
                yield span

    try:
        for conversation in conversations(own(), tally, idle_ns, None if keep else READ):
            found.append(
                (_order(conversation, file_of), facts(conversation, replacements), conversation if keep else None)
            )
    except otlp.TraceUnreadable as exc:
        return Built(found, aside, tally, _problem(exc, part.file))
    return Built(found, aside, tally, None)


def _bucket(group: str, buckets: int) -> int:
    """The bucket (a worker's share of the shared groups) a group's spans go to: the same on every machine."""
    return zlib.crc32(group.encode("utf-8")) % buckets


def _share(built: Built, bucket: int, buckets: int, group_of: dict[str, str]) -> list[tuple[int, otlp.Span]]:
    """A part's set-aside spans of one bucket's groups (run on a worker)."""
    return [(file, span) for file, span in built.aside if _bucket(group_of[span.trace_id], buckets) == bucket]


def _build_shared(
    pieces: list[list[tuple[int, otlp.Span]]],
    group_of: dict[str, str],
    idle_ns: int,
    replacements: Sequence[Replacement],
    keep: bool,
) -> Built:
    """The conversations of groups several parts share, each group built alone from its spans in file order (run on
    a worker)."""
    by_group: dict[str, list[tuple[int, otlp.Span]]] = {}
    for piece in pieces:  # in part order: within a line, the spans keep the order they were read in
        for file, span in piece:
            by_group.setdefault(group_of[span.trace_id], []).append((file, span))
    tally, found = Tally(), []
    problems: list[Problem] = []
    for group in sorted(by_group):
        spans = sorted(by_group[group], key=lambda item: (item[0], item[1].line))
        file_of = {span.path: file for file, span in spans}
        alone = Tally()  # each group read as if alone, whichever groups its bucket holds
        try:
            for conversation in conversations((span for _, span in spans), alone, idle_ns, None if keep else READ):
                found.append(
                    (_order(conversation, file_of), facts(conversation, replacements), conversation if keep else None)
                )
        except otlp.TraceUnreadable as exc:
            problems.append(_problem(exc, file_of.get(exc.path, 0)))
        _add(tally, alone)
    return Built(found, [], tally, min(problems) if problems else None)


def _results(built: Built) -> tuple[list[Found], Tally, Problem | None]:
    """What the client takes of a part's build, its conversations in the order of their first call: not its
    set-aside spans (run on a worker)."""
    return sorted(built.found, key=_first), built.tally, built.problem


def _problem_of(results: tuple[list[Found], Tally, Problem | None]) -> Problem | None:
    """A part's first bad line, without its facts (run on a worker)."""
    return results[2]


def _first(found: Found) -> Order:
    return found[0]


def _add(into: Tally, tally: Tally) -> None:
    """A part's tally added to the run's."""
    for f in fields(Tally):
        setattr(into, f.name, getattr(into, f.name) + getattr(tally, f.name))


def run(
    client: Client,
    paths: Sequence[str],
    idle_ns: int,
    tally: Tally,
    replacements: Sequence[Replacement] = (),
    keep: bool = False,
    chunk: int = CHUNK,
) -> Iterator[tuple[Facts, Conversation | None]]:
    """The files' conversations as facts (with the conversations when `keep`), built on `client`'s workers, in the
    order of their first call; what reading saw is added to `tally`. TraceUnreadable names the first bad line."""
    parts: list[Part] = client.submit(plan, list(paths), chunk, pure=False).result()
    scans: list[Scan] = client.gather(client.map(_scan, parts, pure=False))
    first_lines, seen = [], dict[int, int]()  # each part's first line: the lines of the file's earlier parts, plus 1
    for part, scan in zip(parts, scans):
        first_lines.append(seen.get(part.file, 0) + 1)
        seen[part.file] = seen.get(part.file, 0) + scan.lines
    edges: set[tuple[str, str]] = set().union(*(scan.edges for scan in scans))
    group_of = _groups(edges)
    parts_of: dict[str, set[int]] = {}
    for k, scan in enumerate(scans):
        for trace, _ in scan.edges:
            parts_of.setdefault(group_of[trace], set()).add(k)
    shared_groups = {group for group, where in parts_of.items() if len(where) > 1}
    shared_of = {trace: group for trace, group in group_of.items() if group in shared_groups}
    built = client.map(
        _build,
        parts,
        first_lines,
        [{trace for trace, _ in scan.edges if trace in shared_of} for scan in scans],
        idle_ns=idle_ns,
        replacements=list(replacements),
        keep=keep,
        pure=False,
    )
    buckets = max(1, min(len(shared_groups), len(client.scheduler_info()["workers"])))
    [groups] = client.scatter([shared_of], broadcast=True)  # one value (a dict would be scattered item by item)
    shared = [
        client.submit(
            _build_shared,
            [client.submit(_share, b, bucket, buckets, groups, pure=False) for b in built],
            groups,
            idle_ns,
            list(replacements),
            keep,
            pure=False,
        )
        for bucket in range(buckets if shared_groups else 0)
    ]
    # The shared groups' conversations first (few): a part's come in the order of their first call, and the parts in
    # file order, so the two merge as they come, one part's facts held here at a time.
    pending = client.map(_results, built, pure=False)
    del built  # each part's build is released on its worker once its results are read
    problems: list[Problem] = []
    shared_found: list[Found] = []
    for part_found, part_tally, problem in client.gather(client.map(_results, shared, pure=False)):
        shared_found += part_found
        _add(tally, part_tally)
        problems += [problem] if problem is not None else []
    unscanned = [
        ((part.file, line and first + line - 1), path, line and first + line - 1, problem)
        for part, first, scan in zip(parts, first_lines, scans)
        if scan.problem is not None
        for line, path, problem in [scan.problem]
    ]
    if problems or unscanned:  # the first bad line may be in any part: each part's is looked at
        problems += [p for p in client.gather(client.map(_problem_of, pending, pure=False)) if p is not None]
        raise otlp.TraceUnreadable(*min(problems or unscanned)[1:])

    def parts_found() -> Iterator[Found]:
        while pending:
            part_found, part_tally, problem = pending.pop(0).result()  # released once read
            _add(tally, part_tally)
            if problem is not None:  # no earlier part and no shared group had one: the first in file order
                raise otlp.TraceUnreadable(*problem[1:])
            yield from part_found

    for _, f, conversation in heapq.merge(parts_found(), sorted(shared_found, key=_first), key=_first):
        yield f, conversation
