"""Spans grouped into conversations (by gen_ai.conversation.id, else by trace), each closed once no span of it has
ended for a window of span time, so memory holds the conversations open at once, not the file; in a conversation,
one tool call seen by several spans (the agent's `execute_tool`, the MCP client's and the server's `tools/call`) is
one call, and each call belongs to the model call that requested it (by gen_ai.tool.call.id, else by order)."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

import msgspec
from msgspec import structs

from wismo.runs.traces.conventions import CONVERSATION, ModelCall, SpanIncomplete, ToolCall, model_call, tool_call
from wismo.runs.traces.otlp import Span, TraceUnreadable

TRACE_KEY = "trace "  # a conversation no gen_ai.conversation.id names is keyed by this and its trace id
IDLE_NS = 600 * 10**9  # a conversation with no span ending in 10 minutes of span time is complete
SWEEP_EVERY = 4096  # spans between looks for idle conversations


@dataclass(frozen=True)
class Conversation:
    """One conversation: its model calls and its distinct tool calls in start order, and for each tool call the
    index (0-based) of the model call that requested it."""

    key: str  # the gen_ai.conversation.id, else "trace " and the trace id
    model_calls: tuple[ModelCall, ...]
    tool_calls: tuple[ToolCall, ...]
    requested_by: tuple[int, ...]
    sources: tuple[str, ...]  # the files its spans came from
    root: str = ""  # the name of its trace's root span (an agent's run, say): what names it without content


@dataclass
class Tally:
    """What reading saw: spans, the model and tool call spans among them, the tool (and model) call spans that were
    another span of a call already counted, the spans that are neither (ignored), and the conversations left out because
    no model call of theirs was traced (with their spans)."""

    spans: int = 0
    model_call_spans: int = 0
    tool_call_spans: int = 0
    same_call_spans: int = 0
    same_model_call_spans: int = 0  # model call spans nested in another of the same request
    ignored_spans: int = 0
    # spans read again: the trace and span id of one already in its open conversation (a file given twice under two
    # names, a Collector's retry), each read once
    duplicate_spans: int = 0
    conversations: int = 0
    without_model_call: int = 0
    spans_without_model_call: int = 0
    tool_calls_without_model_call: int = 0  # distinct tool calls in those: calls no model call can be given


# An open conversation is untracked by the cycle collector, as its spans and calls are (otlp.Span): it holds them
# in dicts, which stay untracked while every value in them is (a list or a set is tracked whatever it holds). Open
# for the idle window, the lists and sets it held (five per conversation) outlived the collector's young passes,
# and their number set off its full passes over every object the process holds: the collector took 55 ms of the
# bench file's 1.3 s analysis, 5 to 28 ms since.
# Untracked, a cycle through it would never be freed: nothing it holds refers back to it or to another bucket.
class _Open(msgspec.Struct, gc=False):
    key: str
    named: bool  # keyed by gen_ai.conversation.id, not by a trace
    models: dict[int, ModelCall] = msgspec.field(default_factory=dict)  # by the span's place in the reading
    tools: dict[int, ToolCall] = msgspec.field(default_factory=dict)
    parents: dict[str, str] = msgspec.field(default_factory=dict)  # span id -> parent span id, every span
    traces: dict[str, None] = msgspec.field(default_factory=dict)  # the trace ids of its spans (a set, untracked)
    sources: dict[str, None] = msgspec.field(default_factory=dict)  # the files its spans came from
    read: dict[str, str] = msgspec.field(default_factory=dict)  # span id -> the trace id of the first span with it
    # trace id + span id of the other spans with an id read before (hostile input, or a rare chance: another trace)
    read_in_other_traces: dict[str, None] = msgspec.field(default_factory=dict)
    spans: int = 0
    last_ns: int = 0
    root: str = ""  # the first root span's name

    def absorb(self, other: _Open) -> None:
        self.root = self.root or other.root
        self.models |= other.models
        self.tools |= other.tools
        self.parents.update(other.parents)
        self.traces |= other.traces
        self.sources |= other.sources
        for span_id, trace_id in other.read.items():
            first = self.read.setdefault(span_id, trace_id)
            if first != trace_id:
                self.read_in_other_traces[trace_id + span_id] = None
        self.read_in_other_traces |= other.read_in_other_traces
        self.spans += other.spans
        self.last_ns = max(self.last_ns, other.last_ns)


def _classified(span: Span) -> ModelCall | ToolCall | None:
    try:
        return model_call(span) or tool_call(span)
    except SpanIncomplete as exc:
        raise TraceUnreadable(
            span.path, span.line, f"span {span.name!r} ({span.span_id}) lacks {exc.missing}, which a conversation needs"
        ) from None


SHALLOW = 32  # ancestors walked before a bucket's nesting is read in one pass over its spans instead (_Nesting)


class _Nesting:
    """Which calls of a bucket sit inside another, read in one pass from its roots down: for each tool call the
    outermost call of its tool above it ("" when none), for each model call whether a model call is above it. A trace
    whose calls nest one inside another n deep costs n, not a walk to the root for each. A span under a cycle of
    parents (hostile input) is reached from no root and has no answer here: the walk reads it."""

    def __init__(self, parents: dict[str, str], tools: list[ToolCall], models: set[str]) -> None:
        asked: dict[str, list[str]] = {}  # span -> the tools of the calls it records
        for t in tools:
            asked.setdefault(t.span.span_id, []).append(t.tool)
        tool_of = {t.span.span_id: t.tool for t in tools}  # a span's call, the last of an id as _distinct keeps it
        children: dict[str, list[str]] = {}
        roots = []
        for span in dict.fromkeys([*parents, *filter(None, parents.values())]):  # a parent outside the bucket too
            parent = parents.get(span, "")
            if parent:
                children.setdefault(parent, []).append(span)
            else:
                roots.append(span)
        self.outermost: dict[tuple[str, str], str] = {}  # (span, tool) -> the outermost call of the tool above it
        self.nested: dict[str, bool] = {}  # model call's span -> whether a model call is above it
        above: dict[str, str] = {}  # tool -> the outermost span of that tool on the path from the root
        models_above = 0
        stack = [(root, False) for root in roots]  # (span, leaving it)
        while stack:
            span, leaving = stack.pop()
            tool = tool_of.get(span)
            if leaving:
                if tool is not None and above.get(tool) == span:
                    del above[tool]
                models_above -= span in models
                continue
            for asked_tool in asked.get(span, ()):
                self.outermost[(span, asked_tool)] = above.get(asked_tool, "")
            if span in models:
                self.nested[span] = models_above > 0
            if tool is not None and tool not in above:
                above[tool] = span
            models_above += span in models
            stack.append((span, True))
            stack.extend((child, False) for child in children.get(span, ()))


def _distinct(bucket: _Open, tally: Tally) -> list[ToolCall]:
    """The bucket's tool calls with every span nested in a span of the same call (same tool, an ancestor) merged
    into that outermost span: what it lacks (call id, arguments, result) taken from the nested one."""
    tools = list(bucket.tools.values())
    by_span = {t.span.span_id: t for t in tools}
    outermost: dict[str, str] = {}
    nesting: _Nesting | None = None
    for t in tools:
        top, seen, parent = t.span.span_id, {t.span.span_id}, bucket.parents.get(t.span.span_id, "")
        while parent and parent not in seen:
            if len(seen) == SHALLOW:
                nesting = nesting or _Nesting(bucket.parents, tools, set())
                found = nesting.outermost.get((t.span.span_id, t.tool))
                if found is not None:
                    top = found or t.span.span_id
                    break
            seen.add(parent)
            above = by_span.get(parent)
            if above is not None and above.tool == t.tool:
                top = parent
            parent = bucket.parents.get(parent, "")
        outermost[t.span.span_id] = top
    merged: dict[str, ToolCall] = {}
    for t in sorted(tools, key=lambda t: (t.span.start_ns, t.span.span_id)):
        top = outermost[t.span.span_id]
        if top == t.span.span_id:
            merged[top] = by_span[top]
            continue
        tally.same_call_spans += 1
        outer = merged.get(top, by_span[top])
        merged[top] = ToolCall(
            outer.span,
            outer.tool,
            outer.call_id or t.call_id,
            outer.arguments if outer.arguments is not None else t.arguments,
            outer.result if outer.result is not None else t.result,
            outer.is_error or t.is_error,
            outer.convention,
            outer.conversation,
        )
    return sorted(merged.values(), key=lambda t: (t.span.start_ns, t.span.span_id))


def _requesters(models: list[ModelCall], tools: list[ToolCall]) -> list[int]:
    """For each tool call, the model call that requested it: the latest started before it whose output named its
    call id, else the last model call started before it (the first, when none was). `models` in start order; each
    found by bisection, so a long session's calls cost n log n, not n squared."""
    starts = [m.span.start_ns for m in models]
    naming: dict[str, list[int]] = {}  # call id -> the model calls whose output named it, in order
    for i, m in enumerate(models):
        for call_id in m.requested:
            naming.setdefault(call_id, []).append(i)
    by = []
    for tool in tools:
        started = bisect_right(starts, tool.span.start_ns)  # the model calls started before it: a prefix
        named = naming.get(tool.call_id, ()) if tool.call_id else ()  # some agents reuse ids ("0") turn after turn
        latest = bisect_left(named, started)
        by.append(named[latest - 1] if latest else max(started - 1, 0))
    return by


def _outermost_models(bucket: _Open, tally: Tally) -> list[ModelCall]:
    """The bucket's model calls without those nested in another model call (a framework's chat span around the
    provider SDK's: one request, its usage reported twice)."""
    models = bucket.models.values()
    ids = {m.span.span_id for m in models}
    nesting: _Nesting | None = None
    kept = []
    for m in models:
        nested: bool | None = None
        seen, parent = {m.span.span_id}, bucket.parents.get(m.span.span_id, "")
        while parent and parent not in seen and parent not in ids:
            if len(seen) == SHALLOW:
                nesting = nesting or _Nesting(bucket.parents, [], ids)
                nested = nesting.nested.get(m.span.span_id)
                if nested is not None:
                    break
            seen.add(parent)
            parent = bucket.parents.get(parent, "")
        if nested is None:  # the walk's end: a model call above it, not a root ("") nor itself come round
            nested = bool(parent) and parent in ids and parent != m.span.span_id
        if nested:
            tally.same_model_call_spans += 1
        else:
            kept.append(m)
    return sorted(kept, key=lambda m: (m.span.start_ns, m.span.span_id))


def _questions(
    key: str, models: list[ModelCall], tools: list[ToolCall], by: list[int], sources: tuple[str, ...], root: str = ""
) -> Iterator[Conversation]:
    """The conversation cut after each model call that asked for no tool (an answer): a session that holds several
    questions is one conversation per question, the first keeping the key, the next "KEY #2" and so on."""
    asked: dict[int, list[int]] = {}  # model call -> the tool calls it requested, in order
    for j, b in enumerate(by):
        asked.setdefault(b, []).append(j)
    start, n = 0, 1
    for i in range(len(models)):
        if i in asked and i < len(models) - 1:
            continue  # it asked for tools: the question goes on
        if i < len(models) - 1 or start <= i:
            picked = sorted(j for b in range(start, i + 1) for j in asked.get(b, ()))
            yield Conversation(
                key=key if n == 1 else f"{key} #{n}",
                model_calls=tuple(models[start : i + 1]),
                tool_calls=tuple(tools[j] for j in picked),
                requested_by=tuple(by[j] - start for j in picked),
                sources=sources,
                root=root,
            )
            start, n = i + 1, n + 1


def _closed(bucket: _Open, tally: Tally) -> list[Conversation]:
    if not bucket.models:
        tally.without_model_call += 1
        tally.spans_without_model_call += bucket.spans
        tally.tool_calls_without_model_call += len(_distinct(bucket, Tally()))
        return []
    models = _outermost_models(bucket, tally)
    tools = _distinct(bucket, tally)
    by = _requesters(models, tools)
    found = list(_questions(bucket.key, models, tools, by, tuple(sorted(bucket.sources)), bucket.root))
    tally.conversations += len(found)
    return found


def _named(span: Span, call: ModelCall | ToolCall | None) -> str:
    """The conversation a span names (gen_ai.conversation.id, or its call's), "" when none."""
    return call.conversation if call is not None else named(span)


def named(span: Span) -> str:
    """The conversation a span names (gen_ai.conversation.id), "" when none: with its trace id, what groups spans
    into conversations (a call's own conversation is the same attribute: conventions.model_call, tool_call)."""
    return str(span.attributes.get(CONVERSATION) or "")


def _lean(span: Span, kept: tuple[str, ...]) -> Span:
    """The span with only the `kept` attributes."""
    attributes = span.attributes
    return structs.replace(span, attributes={k: attributes[k] for k in kept if k in attributes})


class Kept(NamedTuple):
    """What a pass keeps of a call's span attributes once the call is read from it, by kind of call."""

    model: tuple[str, ...]
    tool: tuple[str, ...]


def conversations(
    spans: Iterable[Span], tally: Tally, idle_ns: int = IDLE_NS, kept: Kept | None = None
) -> Iterator[Conversation]:
    """The conversations the spans make, each as soon as it is complete (idle for `idle_ns` of span time, or at
    the end of the spans); counts what it read into `tally`. With `kept`, a call's span keeps only those attributes
    once the call is read from it: what the open conversations hold is then what their facts need (chains.READ),
    not the messages each request carried nor a tool call's attributes beside its arguments and result."""
    open_: dict[str, _Open] = {}
    # trace id -> the key of the open conversation its spans named last (a span that names none joins it); once that
    # one has closed, the trace's next span that names none starts its own
    of_trace: dict[str, str] = {}
    latest: dict[str, int] = {}  # file -> the latest end read in it: files may be given in any order of time
    for span in spans:
        tally.spans += 1
        try:
            call = model_call(span) or tool_call(span)
        except SpanIncomplete:
            call = _classified(span)  # raises TraceUnreadable, naming the span
        named = _named(span, call)
        earlier = of_trace.get(span.trace_id)
        key = named or earlier or f"{TRACE_KEY}{span.trace_id}"
        bucket = open_.get(key)
        if bucket is None:
            bucket = open_[key] = _Open(key, named=bool(named))
        if earlier is not None and earlier != key and earlier in open_ and not open_[earlier].named:
            absorbed = open_.pop(earlier)  # the trace's earlier spans named no conversation: now they do
            bucket.absorb(absorbed)
            for trace in absorbed.traces:
                of_trace[trace] = key
        of_trace[span.trace_id] = key
        # A span read before (its trace and span id in the conversation) is counted, not read again.
        first = bucket.read.get(span.span_id) if span.span_id else None
        if first is None and span.span_id:
            bucket.read[span.span_id] = span.trace_id
        if first is not None and (first == span.trace_id or _read_in_another_trace(bucket, span)):
            tally.duplicate_spans += 1
        else:
            bucket.traces[span.trace_id] = None
            bucket.sources[span.path] = None
            bucket.parents[span.span_id] = span.parent_id
            if not span.parent_id and not bucket.root:
                bucket.root = span.name
            bucket.spans += 1
            if span.end_ns > bucket.last_ns:
                bucket.last_ns = span.end_ns
            if isinstance(call, ModelCall):
                tally.model_call_spans += 1
                if kept is not None:  # the call was made here from this span: no one else holds it
                    call.span = _lean(span, kept.model)
                bucket.models[tally.spans] = call
            elif isinstance(call, ToolCall):
                tally.tool_call_spans += 1
                if kept is not None:
                    call.span = _lean(span, kept.tool)
                bucket.tools[tally.spans] = call
            else:
                tally.ignored_spans += 1
        if span.end_ns > latest.get(span.path, -1):
            latest[span.path] = span.end_ns
        if tally.spans % SWEEP_EVERY == 0:
            idle = [k for k, b in open_.items() if all(b.last_ns < latest[s] - idle_ns for s in b.sources)]
            for key in idle:
                yield from _close(open_.pop(key), of_trace, tally)
    for bucket in list(open_.values()):
        yield from _close(bucket, of_trace, tally)


def _read_in_another_trace(bucket: _Open, span: Span) -> bool:
    """Whether the span, whose id a span of another trace had first, was read before; it is from now on."""
    both = span.trace_id + span.span_id
    if both in bucket.read_in_other_traces:
        return True
    bucket.read_in_other_traces[both] = None
    return False


def _close(bucket: _Open, of_trace: dict[str, str], tally: Tally) -> Iterator[Conversation]:
    for trace in bucket.traces:
        if of_trace.get(trace) == bucket.key:
            del of_trace[trace]
    yield from _closed(bucket, tally)
