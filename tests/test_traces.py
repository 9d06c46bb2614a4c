"""Agents' OpenTelemetry traces: OTLP JSON read in either id encoding and either enum form, spans recognised under
the GenAI, MCP and OpenLLMetry conventions, conversations grouped and closed as they go idle, one call seen by
several spans counted once, the chains and links, and bad input named by file, line and problem."""

import base64
import dataclasses
import gc
import json
import pickle
import re
from pathlib import Path

import pytest
from msgspec import structs

from wismo.core.errors import InputError
from wismo.runs.traces import chains, conventions, conversations, otlp

HERE = Path(__file__).parent / "traces"
CONVENTIONS = HERE / "conventions-example.json"  # written from the GenAI and MCP conventions' documents
OPENLLMETRY = HERE / "openllmetry-mcp1.json"  # OpenLLMetry's names, protobuf's JSON (base64 ids, enum names)


def _read(*paths: Path) -> tuple[list[conversations.Conversation], conversations.Tally]:
    tally = conversations.Tally()
    spans = (s for p in paths for s in otlp.read(p))
    return list(conversations.conversations(spans, tally)), tally


def _document() -> dict:
    return json.loads(CONVENTIONS.read_text(encoding="utf-8"))


def _spans_of(document: dict) -> list[dict]:
    return document["resourceSpans"][0]["scopeSpans"][0]["spans"]


def _write_lines(path: Path, *documents: dict) -> Path:
    path.write_text("".join(json.dumps(d, separators=(",", ":")) + "\n" for d in documents), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("field", "given", "read"),
    [
        ("traceId", "4BF92F3577B34DA6A3CE929D0E0E4736", "4bf92f3577b34da6a3ce929d0e0e4736"),  # hex in capitals
        ("spanId", "00F067AA0BA902B7", "00f067aa0ba902b7"),
        ("parentSpanId", "", ""),
        # Base64 as protobuf's JSON reader takes it: URL-safe, or without its padding.
        ("spanId", "--_77_vv--8=", "fbeffbeffbeffbef"),
        ("spanId", "APBnqgupArc", "00f067aa0ba902b7"),
        ("traceId", "S_kvNXezTaajzpKdDg5HNg", "4bf92f3577b34da6a3ce929d0e0e4736"),
    ],
)
def test_an_id_reads_as_the_general_rules_read_it(tmp_path, field, given, read):
    document = _document()
    _spans_of(document)[1][field] = given
    span = list(otlp.read(_write_lines(tmp_path / "ids.json", document)))[1]
    assert {"traceId": span.trace_id, "spanId": span.span_id, "parentSpanId": span.parent_id}[field] == read


@pytest.mark.parametrize(
    ("field", "given", "problem"),
    [
        ("spanId", "zzzzzzzzzzzzzzzz", "spanId 'zzzzzzzzzzzzzzzz' is neither 16 hex digits nor base64 of 8 bytes"),
        ("traceId", "00f067aa0ba902b7", "traceId '00f067aa0ba902b7' is neither 32 hex digits nor base64 of 16"),
        # The trace id read a span before, given where a span id belongs: refused, not taken from what was read.
        ("parentSpanId", "4bf92f3577b34da6a3ce929d0e0e4736", "parentSpanId '4bf92f3577b34da6a3ce929d0e0e4736' is"),
        # Hex with whitespace in it: bytes.fromhex skips the whitespace and reads fewer bytes than an id has.
        ("traceId", "4bf92f3577b34da6a3ce929d0e 47 36", "traceId '4bf92f3577b34da6a3ce929d0e 47 36' is neither 32"),
        ("spanId", "00f067aa\t0ba902 ", "spanId '00f067aa\\t0ba902 ' is neither 16 hex digits nor base64 of 8"),
    ],
)
def test_a_wrong_id_is_refused_in_the_general_rules_words(tmp_path, field, given, problem):
    document = _document()
    _spans_of(document)[1][field] = given
    assert problem in _unreadable(_write_lines(tmp_path / "ids.json", document)).problem


KIND_NAMES = {1: "SPAN_KIND_INTERNAL", 3: "SPAN_KIND_CLIENT"}


def test_hex_or_base64_ids_and_integer_or_named_enums_read_alike(tmp_path):
    hexed = _write_lines(tmp_path / "hex.json", _document())
    encoded = _document()
    for span in _spans_of(encoded):
        for field in ("traceId", "spanId", "parentSpanId"):
            if span.get(field):
                span[field] = base64.b64encode(bytes.fromhex(span[field])).decode()
        span["kind"] = KIND_NAMES[span["kind"]]
    b64 = _write_lines(tmp_path / "b64.json", encoded)
    a, b = list(otlp.read(hexed)), list(otlp.read(b64))
    assert len(a) == 9 and [(s.trace_id, s.span_id, s.parent_id, s.kind) for s in a] == [
        (s.trace_id, s.span_id, s.parent_id, s.kind) for s in b
    ]
    assert a[0].trace_id == "4bf92f3577b34da6a3ce929d0e0e4736" and a[1].parent_id == "00f067aa0ba902b7"
    assert a[1].attributes["gen_ai.usage.input_tokens"] == 412 and a[0].service == "order-assistant"


def test_a_request_may_name_its_resource_spans_by_the_proto_name(tmp_path):
    document = _document()
    renamed = {"resource_spans": document["resourceSpans"]}
    path = _write_lines(tmp_path / "proto.json", renamed)
    assert list(otlp.read(path)) == [structs.replace(s, path=str(path)) for s in otlp.read(CONVENTIONS)]


def test_a_zstd_file_that_decompresses_to_far_more_is_held_a_slice_s_output_at_a_time():
    import io

    import zstandard

    compressed = zstandard.ZstdCompressor().compress(b"{}\n" + b" " * (64 << 20) + b"\n")
    reader, buffer, peak, total = otlp._ZstdFrames(io.BytesIO(compressed)), bytearray(1 << 20), 0, 0
    while read := reader.readinto(buffer):
        peak, total = max(peak, len(reader.pending)), total + read
    assert total == (64 << 20) + 4
    # A zstd block gives at most 128 KiB for its 3-byte header and one byte: a slice's output is bounded by that.
    assert peak <= otlp._ZstdFrames.SLICE // 4 * (128 << 10) < total


def test_an_indented_document_reads_as_its_lines_do(tmp_path):
    lines = _write_lines(tmp_path / "lines.json", _document(), _document())
    assert [s.span_id for s in otlp.read(CONVENTIONS)] == [s.span_id for s in otlp.read(lines)][:9]
    assert [s.line for s in otlp.read(lines)] == [1] * 9 + [2] * 9


def _unreadable(path: Path) -> otlp.TraceUnreadable:
    with pytest.raises(otlp.TraceUnreadable) as caught:
        list(conversations.conversations(otlp.read(path), conversations.Tally()))
    return caught.value


def test_bad_input_is_named_by_file_line_and_problem(tmp_path):
    good = json.dumps(_document(), separators=(",", ":"))
    cases = {
        "not-json.json": (good + "\nhello\n", 2, "not JSON"),
        "truncated.json": (good + "\n" + good[: len(good) // 2], 2, "truncated"),
        # json's words with the column they point at.
        "cut-string.json": (
            good + '\n{"a": "b',
            2,
            "the line ends before its JSON does (Unterminated string starting at column 7)",
        ),
        "control.json": (good + '\n{"a": "b\tc"}\n', 2, "not JSON (Invalid control character at column 9)"),
        "not-otlp.json": ('{"spans": []}\n', 1, "not OTLP JSON (no resourceSpans"),
        # One indented document cut short: the file, not a line, ends early; a bad one is not JSON where it breaks.
        "truncated-document.json": ('{\n "resourceSpans": [\n', 3, "truncated: the file ends before its JSON"),
        "bad-document.json": ('{\n "resourceSpans": [\n  x]}\n', 3, "not JSON (Expecting value, column 3)"),
        "binary.json": (None, 1, "not UTF-8"),
    }
    for name, (text, line, problem) in cases.items():
        path = tmp_path / name
        if text is None:
            path.write_bytes(b"\xff\xfe{\n")
        else:
            path.write_text(text, encoding="utf-8")
        error = _unreadable(path)
        assert (error.path, error.line) == (str(path), line) and problem in error.problem, (name, str(error))
        assert str(error).startswith(f"{path}, line {line}: ")
    bad_id = _document()
    _spans_of(bad_id)[2]["spanId"] = "not an id"
    error = _unreadable(_write_lines(tmp_path / "bad-id.json", bad_id))
    assert error.line == 1 and "spanId 'not an id' is neither 16 hex digits nor base64 of 8 bytes" in error.problem
    missing = _document()
    chat = _spans_of(missing)[1]
    chat["attributes"] = [a for a in chat["attributes"] if a["key"] != "gen_ai.usage.input_tokens"]
    error = _unreadable(_write_lines(tmp_path / "no-usage.json", _document(), missing))
    assert (
        error.line == 2 and "lacks gen_ai.usage.input_tokens" in error.problem and "1111111111111111" in error.problem
    )
    unnamed = _document()
    tool = _spans_of(unnamed)[2]
    tool["attributes"] = [a for a in tool["attributes"] if a["key"] != "gen_ai.tool.name"]
    assert "lacks gen_ai.tool.name" in _unreadable(_write_lines(tmp_path / "no-tool.json", unnamed)).problem
    assert "cannot be read" in _unreadable(tmp_path / "absent.json").problem


def test_the_conventions_example_is_one_conversation_with_each_call_once():
    found, tally = _read(CONVENTIONS)
    assert len(found) == 1
    (c,) = found
    assert c.key == "conv_5j66UpCpwteGg4YSxUnt7lPY" and c.sources == (str(CONVENTIONS),)
    assert [m.input_tokens for m in c.model_calls] == [412, 497, 603]
    assert {m.model for m in c.model_calls} == {"gpt-4.1-mini-2025-04-14"}
    # The agent's execute_tool span and the MCP client span inside it are one call, named once.
    assert [(t.tool, t.convention) for t in c.tool_calls] == [("get_order", "gen_ai"), ("get_tracking", "gen_ai")]
    assert c.requested_by == (0, 1)  # the first by gen_ai.output.messages' call id, the second by order
    assert (tally.spans, tally.model_call_spans, tally.tool_call_spans, tally.same_call_spans) == (9, 3, 4, 2)
    assert tally.ignored_spans == 2  # invoke_agent and the HTTP client span
    summary = chains.chains(found)[0][0].summary(1)
    assert summary["tools"] == ["get_order", "get_tracking"] and summary["tokensAddedPerTurn"] == [85, 106]
    assert summary["links"] == [
        {
            "from": "get_order",
            "path": "trackingIds[]",
            "tool": "get_tracking",
            "argument": "trackingId",
            "conversations": 1,
        }
    ]
    assert summary["inputTokensSavedPerConversation"]["median"] == 497  # the second request, no longer made


def test_openllmetrys_form_is_read_with_its_names():
    (c,), tally = _read(OPENLLMETRY)
    assert c.key == "trace a1b2c3d4e5f60718293a4b5c6d7e8f90"  # no conversation id: the trace is the conversation
    assert [(m.input_tokens, m.output_tokens) for m in c.model_calls] == [(380, 15), (451, 17), (502, 58)]
    assert [(t.tool, t.convention, t.arguments) for t in c.tool_calls] == [
        ("get_order", "openllmetry", '{"orderId":"ORD-2002"}'),
        ("get_payment", "openllmetry", '{"paymentId":"PAY-2002"}'),
    ]
    assert json.loads(c.tool_calls[0].result)["paymentId"] == "PAY-2002"
    assert tally.ignored_spans == 1  # the workflow span
    assert chains.links(c) == {chains.Link("get_order", "paymentId", "get_payment", "paymentId")}


def _span(trace: str, span: str, end_s: int, attributes: dict, parent: str = "") -> otlp.Span:
    return otlp.Span(trace, span, parent, "s", 1, (end_s - 1) * 10**9, end_s * 10**9, attributes, False, "", "f", 1)


def _chat(trace: str, span: str, end_s: int, conversation: str = "", tokens: int = 100) -> otlp.Span:
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": tokens, "gen_ai.usage.output_tokens": 5}
    if conversation:
        attributes["gen_ai.conversation.id"] = conversation
    return _span(trace, span, end_s, attributes)


def _tool(trace: str, span: str, end_s: int, tool: str, parent: str = "", mcp: bool = False) -> otlp.Span:
    attributes = {"gen_ai.tool.name": tool}
    attributes.update({"mcp.method.name": "tools/call"} if mcp else {"gen_ai.operation.name": "execute_tool"})
    return _span(trace, span, end_s, attributes, parent)


def test_traces_naming_one_conversation_join_and_a_trace_naming_none_is_its_own():
    spans = [
        _tool("t1", "a", 2, "get_order"),  # arrives before the span that names its conversation
        _chat("t1", "b", 1, "c-1"),
        _chat("t2", "c", 3, "c-1", tokens=150),
        _tool("t2", "d", 4, "get_order"),
        _tool("t2", "e", 4, "get_order", parent="d", mcp=True),  # the MCP span inside the agent's: one call
        _chat("t3", "f", 5),
    ]
    tally = conversations.Tally()
    found = {c.key: c for c in conversations.conversations(spans, tally)}
    assert sorted(found) == ["c-1", "trace t3"]
    assert [t.span.span_id for t in found["c-1"].tool_calls] == ["a", "d"] and tally.same_call_spans == 1
    assert chains.steps(found["c-1"]) == (("get_order", 2),)
    assert found["c-1"].requested_by == (0, 1)


def test_a_conversation_idle_for_the_window_is_given_before_the_spans_after_it_are_read(monkeypatch):
    monkeypatch.setattr(conversations, "SWEEP_EVERY", 1)
    read = []

    def spans():
        for i in range(6):
            span = _chat(f"t{i}", f"s{i}", 10 * i)
            read.append(span.span_id)
            yield span

    given = []
    for c in conversations.conversations(spans(), conversations.Tally(), idle_ns=15 * 10**9):
        given.append((c.key, len(read)))
    # t0 ends at 0 s: idle past 15 s once t2 (20 s) is read; at most three conversations are ever open at once.
    assert given[0] == ("trace t0", 3) and [k for k, _ in given] == [f"trace t{i}" for i in range(6)]
    assert all(at - int(key[-1]) <= 3 for key, at in given[:4])


def test_a_trace_without_a_model_call_is_counted_not_made_a_conversation():
    tally = conversations.Tally()
    assert list(conversations.conversations([_tool("t9", "x", 1, "get_order")], tally)) == []
    assert (tally.without_model_call, tally.spans_without_model_call, tally.conversations) == (1, 1, 0)


def test_repeated_calls_of_one_tool_are_one_step_and_links_need_an_earlier_result():
    call = conventions.ToolCall
    span = _span("t", "s", 1, {})

    def made(tool: str, arguments: dict, result: dict | None) -> conventions.ToolCall:
        return call(
            span, tool, "", json.dumps(arguments), None if result is None else json.dumps(result), False, "", ""
        )

    tools = (
        made("get_order", {"orderId": "O-1"}, {"orderId": "O-1", "reservationIds": ["R-1", "R-2"]}),
        made("get_reservation", {"reservationId": "R-1"}, {"sku": "X"}),
        made("get_reservation", {"reservationId": "R-2"}, {"sku": "Y"}),
    )
    model = conventions.ModelCall(span, "m", "p", 10, 1, 0, "", ())
    c = conversations.Conversation("k", (model,), tools, (0, 0, 0), ("f",))
    assert chains.steps(c) == (("get_order", 1), ("get_reservation", 2))
    assert chains.links(c) == {chains.Link("get_order", "reservationIds[]", "get_reservation", "reservationId")}
    # The first call's own argument appears in its result, not in an earlier one: no link.
    assert all(link.tool != "get_order" for link in chains.links(c))
    assert chains.resends_saved(c) == 0  # every call asked for in one turn: no extra turn to save
    later = dataclasses.replace(c, model_calls=(model, model), requested_by=(0, 1, 1))
    assert chains.resends_saved(later) == 10


def test_a_conversation_without_a_traced_answer_or_content_imports_and_verifies(tmp_path):
    from wismo import runs
    from wismo.runs.traces import imported

    document = _document()
    spans = _spans_of(document)
    spans[:] = [s for s in spans if s["spanId"] != "7777777777777777"]  # the last model call, the answer
    for span in spans:  # content capture off: no arguments, no results
        span["attributes"] = [a for a in span["attributes"] if not a["key"].startswith("gen_ai.tool.call.")]
    (c,), _ = _read(_write_lines(tmp_path / "agent.json", document))
    (folder,) = imported.write_runs([c], tmp_path / "runs")
    assert runs.verify(folder) == []
    run = runs.load(folder)
    (t,) = run.traces
    assert t["outcome"] == "no answer in the trace" and t["reason"] and t["answerText"] is None
    assert [(c["name"], c["captured"], c["resultBytes"], c["request"]) for c in t["toolCalls"]] == [
        ("get_order", False, 0, 1),
        ("get_tracking", False, 0, 2),
    ]
    assert t["totals"]["inputTokens"] == 412 + 497 and run.manifest["design"] == "agent"
    assert run.manifest["study"]["designs"] == ["agent"] and t["orderId"] == c.key


def test_a_session_of_several_questions_is_one_conversation_per_question_and_reused_ids_stay_in_their_turn():
    def chat(span: str, end_s: int, tokens: int, asked: tuple[str, ...] = ()) -> otlp.Span:
        s = _chat("t", span, end_s, "session", tokens)
        parts = [{"type": "tool_call", "id": i, "name": "get_order"} for i in asked]
        s.attributes["gen_ai.output.messages"] = json.dumps([{"role": "assistant", "parts": parts}])
        return s

    def tool(span: str, end_s: int) -> otlp.Span:
        s = _tool("t", span, end_s, "get_order")
        s.attributes["gen_ai.tool.call.id"] = "0"  # the same id in both questions
        return s

    spans = [chat("a", 1, 100, ("0",)), tool("b", 2), chat("c", 3, 200), chat("d", 4, 300, ("0",)), tool("e", 5)]
    spans.append(chat("f", 6, 400))
    found = list(conversations.conversations(spans, conversations.Tally()))
    assert [c.key for c in found] == ["session", "session #2"]
    assert [[m.input_tokens for m in c.model_calls] for c in found] == [[100, 200], [300, 400]]
    assert [c.requested_by for c in found] == [(0,), (0,)]
    assert [chains.resends_saved(c) for c in found] == [0, 0]


def _requester_by_rule(models: list[conventions.ModelCall], tool: conventions.ToolCall) -> int:
    """The rule as written: the latest model call started before the tool call whose output named its id, else the
    last one started before it, else the first."""
    started = [i for i, m in enumerate(models) if m.span.start_ns <= tool.span.start_ns]
    named = [i for i in started if tool.call_id and tool.call_id in models[i].requested]
    return named[-1] if named else started[-1] if started else 0


def _questions_by_rule(models: list, by: list[int]) -> list[tuple[range, list[int]]]:
    """The rule as written: a question ends at each model call that asked for no tool call, and at the last."""
    cuts = [i for i in range(len(models)) if i not in by or i == len(models) - 1]
    starts = [0] + [c + 1 for c in cuts[:-1]]
    return [(range(a, c + 1), [j for j, b in enumerate(by) if a <= b <= c]) for a, c in zip(starts, cuts)]


def test_long_sessions_give_each_tool_call_and_question_what_the_rules_as_written_give():
    import random

    rng = random.Random(7)
    ids = ("", "0", "1", "call_a", "call_b")
    for _ in range(3000):
        models = [
            conventions.ModelCall(
                _span("t", f"m{i}", rng.randrange(1, 6), {}),
                "m",
                "p",
                1,
                1,
                0,
                "s",
                tuple(rng.sample(ids[1:], rng.randrange(3))),
            )
            for i in range(rng.randrange(0, 7))
        ]
        models.sort(key=lambda m: (m.span.start_ns, m.span.span_id))
        tools = [
            conventions.ToolCall(
                _span("t", f"t{j}", rng.randrange(0, 7), {}), "x", rng.choice(ids), None, None, False, "gen_ai", "s"
            )
            for j in range(rng.randrange(0, 7))
        ]
        by = conversations._requesters(models, tools)
        assert by == [_requester_by_rule(models, t) for t in tools]
        found = list(conversations._questions("s", models, tools, by, ("f",)))
        expected = _questions_by_rule(models, by) if models else []
        assert [(c.model_calls, c.tool_calls) for c in found] == [
            (tuple(models[k] for k in kept), tuple(tools[j] for j in picked)) for kept, picked in expected
        ]


def _outermost_by_walk(parents: dict[str, str], span: str, matches) -> str:
    """The rule as written: walk up from a span to its root (or until the walk comes round), keeping the farthest
    span that matches; the span itself when none does."""
    top, seen, parent = span, {span}, parents.get(span, "")
    while parent and parent not in seen:
        seen.add(parent)
        top = parent if matches(parent) else top
        parent = parents.get(parent, "")
    return top


@pytest.mark.parametrize("deep", [False, True], ids=["shallow", "nested deeper than SHALLOW"])
def test_nested_calls_merge_into_their_outermost_as_the_walk_up_finds_it_cycles_too(deep):
    import random

    rng = random.Random(5)
    for _ in range(2000 if not deep else 600):
        spans = [f"s{i}" for i in range(rng.randrange(1, 12) if not deep else rng.randrange(40, 120))]
        if rng.random() < 0.1:
            spans[rng.randrange(len(spans))] = ""  # a span without an id, as a reader gives one that has none
        # Parents among the spans (cycles and self-parents possible, as hostile input may give), a span outside the
        # bucket, or none; nested deeper, most spans inside the one before, the first mostly at a root.
        parents = {s: rng.choice([*spans, "", "", "outside"]) for s in spans}
        if deep:
            parents |= {s: spans[i - 1] for i, s in enumerate(spans) if i and rng.random() < 0.95}
            parents[spans[0]] = rng.choice(["", "", "", "outside", spans[-1]])
        bucket = conversations._Open("k", named=True, parents=parents)
        models_from = rng.choice([0, 0, 35])  # model calls only deep in some: deep ones with none above them too
        for i, s in enumerate(spans):
            if rng.random() < 0.5:
                tool = rng.choice(["a", "b", "c"])
                span = _span("t", s, rng.randrange(1, 5), {})
                bucket.tools[i] = conventions.ToolCall(span, tool, "", None, None, False, "gen_ai", "k")
            elif i >= models_from and rng.random() < (0.5 if not deep else 0.1):
                span = _span("t", s, rng.randrange(1, 5), {})
                bucket.models[i] = conventions.ModelCall(span, "m", "p", 1, 1, 0, "k", ())
        by_span = {t.span.span_id: t for t in bucket.tools.values()}
        expected = {}
        for t in bucket.tools.values():
            top = _outermost_by_walk(parents, t.span.span_id, lambda p, x=t.tool, b=by_span: p in b and b[p].tool == x)
            expected[top] = expected.get(top, 0) + 1
        merged = conversations._distinct(bucket, conversations.Tally())
        assert sorted(t.span.span_id for t in merged) == sorted(expected)
        models = {m.span.span_id for m in bucket.models.values()}
        nested = [
            m for m in bucket.models.values()
            if _outermost_by_walk(parents, m.span.span_id, models.__contains__) != m.span.span_id
        ]  # fmt: skip
        tally = conversations.Tally()
        assert len(conversations._outermost_models(bucket, tally)) == len(bucket.models) - len(nested)
        assert tally.same_model_call_spans == len(nested)


def test_a_conversation_that_absorbs_a_trace_s_earlier_spans_keeps_its_own_calls_first():
    # The order decides between spans that repeat an id (hostile input): the later of them is the call kept.
    spans = [
        _chat("t2", "m", 1, "k"),
        _tool("t2", "s", 2, "get_order"),  # conversation k's own call
        _tool("t1", "s", 2, "get_payment"),  # the same span id, in a trace that names no conversation yet
        _chat("t1", "n", 3, "k"),  # now t1 names k: its earlier spans join k after k's own
    ]
    (c,) = conversations.conversations(spans, conversations.Tally())
    assert [t.tool for t in c.tool_calls] == ["get_payment"]


def test_a_trace_s_spans_naming_no_conversation_go_to_the_one_it_named_last():
    spans = [
        _chat("t1", "a", 1, "k"),
        _chat("t1", "b", 2, "j"),  # the trace now names j
        _tool("t2", "c", 3, "get_order"),  # a trace whose first span names none, then joins k
        _chat("t2", "d", 4, "k"),
        _tool("t1", "e", 5, "get_payment"),  # names none: its trace named j last
    ]
    found = {c.key: c for c in conversations.conversations(spans, conversations.Tally())}
    assert [t.tool for t in found["j"].tool_calls] == ["get_payment"]
    assert [t.tool for t in found["k"].tool_calls] == ["get_order"]


def test_a_model_span_inside_another_is_one_request():
    outer = _chat("t", "a", 2, tokens=100)
    inner = structs.replace(_chat("t", "b", 2, tokens=100), parent_id="a")
    tally = conversations.Tally()
    (c,) = conversations.conversations([outer, inner], tally)
    assert [m.span.span_id for m in c.model_calls] == ["a"] and tally.same_model_call_spans == 1


def test_input_real_agents_write_reads(tmp_path):
    document = _document()
    spans = _spans_of(document)
    spans[2]["newField"] = 1  # a field a newer SDK writes: ignored, as OTLP/JSON asks
    arguments = next(a for a in spans[2]["attributes"] if a["key"] == "gen_ai.tool.call.arguments")
    arguments["value"]["stringValue"] = json.dumps({"orderId": "ORD-2001", "cursor": None})  # strict mode's null
    path = tmp_path / "agent.json"
    path.write_text("\n" + json.dumps(document, indent=2) + "\n", encoding="utf-8")  # indented after a blank line
    (c,), _ = _read(path)
    (chain,), _ = chains.chains([c])
    assert chain.cases == [{"orderId": "ORD-2001"}]
    for bad in ('{"resourceSpans": "x"}\n', '{"resourceSpans": [{"scopeSpans": [{"spans": [7]}]}]}\n'):
        path.write_text(bad, encoding="utf-8")
        assert "not OTLP JSON" in _unreadable(path).problem


def test_links_need_a_value_no_chance_could_give():
    span = _span("t", "s", 1, {})

    def made(tool: str, arguments: dict, result: dict) -> conventions.ToolCall:
        return conventions.ToolCall(span, tool, "", json.dumps(arguments), json.dumps(result), False, "", "")

    model = conventions.ModelCall(span, "m", "p", 10, 1, 0, "", ())
    tools = (
        made("list", {"page": 1}, {"count": 1, "status": "ok", "next-id": "N-123"}),
        made("get", {"page": 1, "status": "ok", "id": "N-123"}, {}),
    )
    c = conversations.Conversation("k", (model,), tools, (0, 0), ("f",))
    assert chains.links(c) == {chains.Link("list", '"next-id"', "get", "id")}  # a JMESPath identifier, quoted


def _two_calls(
    result: str, arguments: str, first: str = "find", first_arguments: str = "{}"
) -> conversations.Conversation:
    """A conversation of two tool calls: `first` returning `result`, then `get` taking `arguments`."""
    span = _span("t", "s", 1, {})
    tools = (
        conventions.ToolCall(span, first, "", first_arguments, result, False, "", ""),
        conventions.ToolCall(span, "get", "", arguments, "{}", False, "", ""),
    )
    model = conventions.ModelCall(span, "m", "p", 10, 1, 0, "", ())
    return conversations.Conversation("k", (model,), tools, (0, 0), ("f",))


def test_a_value_is_found_in_an_earlier_result_however_the_result_writes_it():
    def linked(result: str, arguments: str) -> set[chains.Link]:
        return chains.links(_two_calls(result, arguments))

    # Escaped in the result's text (a \u escape, an escaped slash), the value is still the one the argument took.
    assert linked('{"id": "ORD\\u002d1004"}', '{"id": "ORD-1004"}') == {chains.Link("find", "id", "get", "id")}
    assert linked('{"at": "a\\/b-1"}', '{"at": "a/b-1"}') == {chains.Link("find", "at", "get", "at")}
    # A number is found whatever its text (1004.0 is 1004), and a text result holds a value anywhere in it.
    assert linked('{"n": 1004.0}', '{"n": 1004}') == {chains.Link("find", "n", "get", "n")}
    assert linked("order ORD-1004 shipped", '{"id": "ORD-1004"}') == {chains.Link("find", "", "get", "id")}
    # Only as a key, or not at all, a value is no link.
    assert linked('{"ORD-1004": 1}', '{"id": "ORD-1004"}') == set()
    assert linked('{"id": "ORD-1005"}', '{"id": "ORD-1004"}') == set()


def test_a_result_or_arguments_nested_too_deeply_are_read_as_text_not_a_crash():
    deep = "[" * 5000 + '"ORD-1004"' + "]" * 5000  # beyond both JSON readers' depth and Python's recursion
    # The deep result is searched as its text, as a result that is not JSON is.
    assert chains.links(_two_calls(deep, '{"id": "ORD-1004"}')) == {chains.Link("find", "", "get", "id")}
    # Deep arguments are no JSON object to take values from; the facts still count the conversation.
    found = chains.facts(_two_calls("{}", '{"id": "ORD-1004"}', first_arguments='{"a": ' + deep + "}"))
    assert found.links == set() and found.arguments is None


def test_a_result_is_searched_a_few_times_then_decoded_once(monkeypatch):
    # Many arguments looked for in one large result cost one decoding, not a search of its text each.
    result = json.dumps([{"id": f"R-{i}", "text": "lorem ipsum " * 5} for i in range(500)])
    decoded: list[str] = []
    held = chains._held
    monkeypatch.setattr(chains, "_held", lambda text: decoded.append(text) or held(text))

    def linked(arguments: dict) -> set[chains.Link]:
        return chains.links(_two_calls(result, json.dumps(arguments), first="list"))

    assert linked({f"a{j}": f"VAL-{j}" for j in range(chains.SCANS)}) == set() and decoded == []
    assert linked({f"a{j}": f"VAL-{j}" for j in range(50)}) == set() and decoded == [result]
    decoded.clear()
    assert linked({"a": "VAL", "b": "R-7"}) == {chains.Link("list", "[].id", "get", "b")} and decoded == [result]


def _links_by_rule(conversation: conversations.Conversation) -> set[chains.Link]:
    """The rule as written: each distinctive value of a call's arguments looked for in every earlier result, decoded
    (a result that is not JSON, or a JSON text, searched as its text)."""
    found, earlier = set(), []
    for call in conversation.tool_calls:
        arguments = chains._json(call.arguments, exact=False)
        for argument, value in chains._leaves(arguments) if earlier and isinstance(arguments, dict) else []:
            for source, decoded in earlier:
                if isinstance(decoded, str):
                    if isinstance(value, str) and value in decoded:
                        found.add(chains.Link(source, "", call.tool, argument))
                    continue
                found |= {chains.Link(source, path, call.tool, argument) for path, v in decoded if v == value}
        if call.result is not None and not call.is_error:
            decoded = chains._json(call.result, exact=False)
            earlier.append((call.tool, decoded if isinstance(decoded, str) else chains._leaves(decoded)))
    return found


def test_links_of_long_conversations_are_what_the_rule_as_written_finds():
    import random

    rng = random.Random(11)
    pool = ["ORD-1004", "PAY-77", "RES-5", 1004, 1004.0, 12345, "ok"]
    escaped = {"ORD-1004": "ORD\\u002d1004", "PAY-77": "PAY-77"}

    def result() -> str | None:
        kind = rng.randrange(6)
        if kind == 0:
            return None
        if kind == 1:
            return f"order {rng.choice(pool)} shipped"  # a text result
        if kind == 2:  # a value written with an escape
            key = rng.choice(list(escaped))
            return '{"id": "' + escaped[key] + '", "n": ' + str(rng.choice([1004, 1004.0, 7])) + "}"
        values = {f"k{i}": rng.choice(pool) for i in range(rng.randrange(1, 4))}
        return json.dumps({"items": [values, {"more": [rng.choice(pool)]}]} if kind == 3 else values)

    span = _span("t", "s", 1, {})
    for _ in range(400):
        tools = tuple(
            conventions.ToolCall(
                span,
                rng.choice(["a", "b", "c"]),
                "",
                json.dumps({f"p{i}": rng.choice(pool) for i in range(3)}),
                result(),
                rng.random() < 0.1,
                "",
                "",
            )
            for _ in range(rng.randrange(1, 12))
        )
        model = conventions.ModelCall(span, "m", "p", 10, 1, 0, "", ())
        c = conversations.Conversation("k", (model,), tools, (0,) * len(tools), ("f",))
        assert chains.links(c) == _links_by_rule(c)


def test_usage_is_provider_reported_unless_the_agent_says_otherwise(tmp_path):
    from wismo.runs.traces import analysis

    assert analysis.analyse([CONVENTIONS])["labels"]["tokens"] == "provider-reported (imported traces)"
    document = _document()
    for span in _spans_of(document):
        if span["name"].startswith("chat"):
            span["attributes"].append({"key": "wismo.usage.kind", "value": {"stringValue": "tiktoken-estimated"}})
    (c,), _ = _read(_write_lines(tmp_path / "marked.json", document))
    assert {m.usage_kind for m in c.model_calls} == {"tiktoken-estimated"}


def test_files_given_newest_first_close_no_conversation_early(monkeypatch):
    monkeypatch.setattr(conversations, "SWEEP_EVERY", 1)
    day = 86_400
    newer = [structs.replace(_chat(f"n{i}", f"n{i}", day + i), path="new.json") for i in range(3)]
    older = []
    for i in range(3):  # each older conversation: a call asking for a tool, the tool, the answer, a second apart
        older += [structs.replace(_chat(f"o{i}", f"o{i}a", 10 * i, "c-" + str(i)), path="old.json")]
        older += [structs.replace(_tool(f"o{i}", f"o{i}t", 10 * i + 1, "get_order"), path="old.json")]
        older += [structs.replace(_chat(f"o{i}", f"o{i}b", 10 * i + 2, "c-" + str(i)), path="old.json")]
    found = list(conversations.conversations(newer + older, conversations.Tally(), idle_ns=5 * 10**9))
    assert sorted(len(c.model_calls) for c in found if c.key.startswith("c-")) == [2, 2, 2]


def test_openllmetrys_tool_decorator_and_a_span_without_an_end(tmp_path):
    span = _span("t", "s", 1, {"traceloop.span.kind": "tool", "traceloop.entity.name": "get_order"})
    span.attributes["traceloop.entity.input"] = json.dumps({"args": [], "kwargs": {"orderId": "ORD-1"}})
    span.attributes["traceloop.entity.output"] = json.dumps({"orderId": "ORD-1"})
    call = conventions.tool_call(span)
    assert call is not None and json.loads(call.arguments) == {"orderId": "ORD-1"}
    document = _document()
    del _spans_of(document)[1]["endTimeUnixNano"]
    path = _write_lines(tmp_path / "no-end.json", document)
    (first,) = [s for s in otlp.read(path) if s.span_id == "1111111111111111"]
    assert first.end_ns == first.start_ns


def test_a_replacement_is_predicted_by_the_accounting_of_report_02():
    from wismo.accounting import tokens
    from wismo.accounting.tokens import conversation
    from wismo.core import walk
    from wismo.runs.traces import prediction

    result = '{"orderId":"ORD-1","records":[1,2,3]}'
    r = prediction.Replacement(
        chain=frozenset({"get_a", "get_b"}),
        tool="get_all",
        removed_definitions=300,
        added_definitions=120,
        results={prediction.case_key({"id": "ORD-1"}): ({"orderId": "ORD-1"}, result)},
        profile="python",
        encoding="o200k_base",
        source="a test",
    )
    items = conversation.turn_items([walk.result("get_all", {"orderId": "ORD-1"}, result)], 1)
    added = sum(tokens.count_item(i, "o200k_base") for i in items)
    # The first request with the definitions exchanged, then the answer request with one call and its result.
    assert r.predict(500, {"id": "ORD-1"}) == 2 * (500 - 300 + 120) + added
    assert r.predict(500, {"id": "ORD-2"}) is None and r.predict(500, None) is None


def test_a_prediction_is_checked_against_the_same_cases_only():
    from wismo.runs.traces import prediction

    a, b, c = ({"id": k} for k in ("A", "B", "C"))
    chains = [
        {"tools": ["get_a", "get_b"], "cases": [a, b, c], "inputTokensByCase": [900, 1000, 1100],
         "predicted": [{"tool": "get_all", "byCase": {prediction.case_key(a): 400, prediction.case_key(c): 600}}]},
        {"tools": ["get_all"], "cases": [b, c], "inputTokensByCase": [480, 500], "predicted": []},
    ]  # fmt: skip
    (check,) = prediction.checks(chains)
    # Only C is both predicted and observed: 600 against 500.
    assert (check["cases"], check["predictedInput"], check["observedInput"], check["errorPercent"]) == (
        1,
        600,
        500,
        20.0,
    )


def test_two_models_conversations_of_one_chain_are_kept_apart():
    span = _span("t", "s", 1, {})

    def conversation(key: str, model: str, provider: str, second: int) -> conversations.Conversation:
        calls = tuple(
            conventions.ToolCall(span, tool, "", '{"id": "O-1"}', '{"ok": 1}', False, "", "")
            for tool in ("get_order", "get_payment")
        )
        models = (
            conventions.ModelCall(span, model, provider, 100, 1, 0, "", ()),
            conventions.ModelCall(span, model, provider, second, 1, 0, "", ()),
            conventions.ModelCall(span, model, provider, second + 50, 1, 0, "", ()),
        )
        return conversations.Conversation(key, models, calls, (0, 1), ("f",))

    counted = chains.Chains()
    for key, model, provider, second in (
        ("a", "gpt-4.1-mini", "openai", 300),
        ("b", "gpt-4.1-mini", "openai", 500),
        ("c", "function:agent", "function", 90),
    ):
        counted.add(conversation(key, model, provider, second))
    (chain,) = counted.ranked()
    by = {m["model"]: m for m in chain.summary(3)["byModel"]}
    # Each model's own mean: the second request each conversation would not send, never the two models' pool.
    assert by["gpt-4.1-mini"] == {
        "model": "gpt-4.1-mini", "provider": "openai", "conversations": 2, "savedInputPerConversation": 400.0
    }  # fmt: skip
    assert by["function:agent"]["conversations"] == 1 and by["function:agent"]["savedInputPerConversation"] == 90.0


def test_the_kind_of_a_model_calls_tokens_is_what_its_span_says():
    from wismo.core.kinds import PROVIDER, SCRIPTED, SERVER, TIKTOKEN

    def kind(**attributes):
        span = _span("t", "s", 1, {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 10,
                                   "gen_ai.usage.output_tokens": 1, **attributes})  # fmt: skip
        return conventions.model_call(span).usage_kind

    assert kind(**{"gen_ai.provider.name": "openai", "server.address": "api.openai.com"}) == PROVIDER
    # An agent framework's stand-in model counts its own words: not a provider's figure.
    assert kind(**{"gen_ai.provider.name": "function"}) == SCRIPTED == kind(**{"gen_ai.provider.name": "test"})
    # A request to this machine or a private network's server: a server's count, not a provider's.
    for address in ("127.0.0.1", "localhost", "10.1.2.3", "192.168.0.9", "[::1]"):
        assert kind(**{"gen_ai.provider.name": "openai", "server.address": address}) == SERVER, address
    # The agent's own word wins: wismo's loop marks its estimates.
    assert kind(**{"gen_ai.provider.name": "wismo.scripted", "wismo.usage.kind": TIKTOKEN}) == TIKTOKEN
    # Each address is parsed once, up to a host name's length; longer text is parsed every time, never kept.
    cache = conventions._parsed_private
    cache.cache_clear()
    assert [kind(**{"server.address": a}) for a in ("10.0.0.1", "nowhere", "10.0.0.1")] == [SERVER, PROVIDER, SERVER]
    assert (cache.cache_info().hits, cache.cache_info().misses) == (1, 2)
    longest = "x" * (conventions.HOST_NAME - len(".localhost")) + ".localhost"
    assert [kind(**{"server.address": longest}) for _ in range(2)] == [SERVER, SERVER]
    assert (cache.cache_info().hits, cache.cache_info().misses) == (2, 3)
    for n in range(2000):
        long_text = "x" * conventions.HOST_NAME + str(n)
        assert kind(**{"server.address": long_text}) == PROVIDER
        assert kind(**{"server.address": long_text + ".localhost"}) == SERVER
    assert (cache.cache_info().hits, cache.cache_info().misses, cache.cache_info().currsize) == (2, 3, 3)


def test_tool_calls_no_model_call_can_be_given_are_counted_and_said_with_the_fix():
    from wismo.runs.traces import analysis

    spans = [
        _chat("t1", "a", 1),  # a model call in a trace of its own, sharing nothing with the tools'
        _tool("t2", "b", 2, "get_order"),
        _tool("t2", "c", 3, "get_payment"),
        _tool("t2", "d", 3, "get_payment", parent="c", mcp=True),  # the MCP span inside the agent's: one call
    ]
    tally = conversations.Tally()
    found = list(conversations.conversations(spans, tally))
    assert len(found) == 1 and not found[0].tool_calls
    assert (tally.without_model_call, tally.tool_calls_without_model_call) == (1, 2)
    said = analysis.unattached({"toolCallsWithoutModelCall": tally.tool_calls_without_model_call})
    assert said.startswith("2 tool calls could not be attached to a model call") and "gen_ai.conversation.id" in said
    assert analysis.unattached({"toolCallsWithoutModelCall": 0}) == ""


def test_calls_asked_for_in_one_response_are_one_step():
    span = _span("t", "s", 1, {})
    tools = tuple(
        conventions.ToolCall(span, tool, "", "{}", "{}", False, "", "")
        for tool in ("get_order", "get_payment", "get_reservation", "get_reservation", "get_tracking")
    )
    model = conventions.ModelCall(span, "m", "p", 10, 1, 0, "", ())
    c = conversations.Conversation("k", (model, model, model), tools, (0, 1, 1, 1, 1), ("f",))
    assert chains.turns(c) == (("get_order",), ("get_payment", "get_reservation", "get_tracking"))
    counted = chains.Chains()
    counted.add(c)
    (chain,) = counted.ranked()
    summary = chain.summary(1)
    assert summary["shown"] == "get_order → {get_payment, get_reservation x2, get_tracking}"
    assert summary["steps"] == [["get_order"], ["get_payment", "get_reservation", "get_tracking"]]
    # One call per response: each its own step.
    one_by_one = dataclasses.replace(c, model_calls=(model,) * 5, requested_by=(0, 1, 2, 2, 3))
    assert chains.turns(one_by_one) == (("get_order",), ("get_payment",), ("get_reservation",), ("get_tracking",))


def test_each_question_of_a_session_is_its_own_runs_question():
    from wismo.runs.traces import imported

    history = [
        {"role": "user", "parts": [{"type": "text", "content": "Where is ORD-1?"}]},
        {"role": "assistant", "parts": [{"type": "text", "content": "On its way."}]},
        {"role": "user", "parts": [{"type": "text", "content": "And ORD-2?"}]},
    ]
    assert imported._question(history) == "And ORD-2?"  # not both questions joined
    assert imported._question(history[:1]) == "Where is ORD-1?" and imported._question([]) == ""


def test_without_content_a_conversation_is_named_by_its_root_span():
    from wismo.runs.traces import imported

    def span(name: str, span_id: str, parent: str, attributes: dict) -> otlp.Span:
        return otlp.Span("t", span_id, parent, name, 1, 0, 10**9, attributes, False, "", "f", 1)

    spans = [
        span("invoke_agent support-bot", "r", "", {"gen_ai.operation.name": "invoke_agent"}),
        span(
            "chat gpt-4.1-mini",
            "c",
            "r",
            {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 2},
        ),  # fmt: skip
        span(
            "execute_tool get_order",
            "x",
            "r",
            {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_order"},
        ),  # fmt: skip
    ]
    (c,) = conversations.conversations(spans, conversations.Tally())
    assert c.root == "invoke_agent support-bot"
    assert imported.case_of(c, None) == "invoke_agent support-bot"  # no content: the agent's run names it
    with_content = dataclasses.replace(
        c, tool_calls=(structs.replace(c.tool_calls[0], arguments='{"orderId": "O-1"}'),)
    )
    assert imported.case_of(with_content, "orderId") == "O-1" and imported.case_of(with_content, None) == "trace t"


def test_a_pass_for_facts_alone_keeps_of_a_call_only_what_facts_read(tmp_path):
    from wismo.runs.traces import analysis, prediction

    document = _document()
    sent = [{"type": "function", "name": t, "description": t, "parameters": {}} for t in ("get_order", "get_tracking")]
    for chat in (s for s in _spans_of(document) if s["name"].startswith("chat")):
        chat["attributes"].append({"key": prediction.DEFINITIONS, "value": {"stringValue": json.dumps(sent)}})
    defined = _write_lines(tmp_path / "defined.json", document)
    shipped = sorted((Path(__file__).parents[1] / "data" / "traces").glob("*.json"))
    for paths in ([defined], [OPENLLMETRY], shipped):
        full = list(conversations.conversations(analysis.spans(paths), conversations.Tally()))
        lean = list(conversations.conversations(analysis.spans(paths), conversations.Tally(), kept=chains.READ))
        assert [chains.facts(c) for c in lean] == [chains.facts(c) for c in full]
        assert {k for c in lean for m in c.model_calls for k in m.span.attributes} <= set(chains.READ.model)
        assert not any(t.span.attributes for c in lean for t in c.tool_calls) and not chains.READ.tool
        assert analysis.analyse(paths) == analysis.analyse(paths, each=lambda c: None)  # lean, then kept whole
    (c,) = conversations.conversations(otlp.read(defined), conversations.Tally(), kept=chains.READ)
    assert chains.facts(c).estimate is not None  # the definitions kept, and read


def test_without_a_study_the_replacement_is_estimated_within_bounds_from_the_definitions_sent():
    from wismo.accounting import tokens
    from wismo.runs.traces import prediction

    sent = [
        {"type": "function", "name": "get_order", "description": "An order by its id.",
         "parameters": {"type": "object", "properties": {"orderId": {"type": "string"}}}},
        {"type": "function", "function": {"name": "get_payment", "description": "A payment by its id.",
         "parameters": {"type": "object", "properties": {"paymentId": {"type": "string"}}}}},
    ]  # fmt: skip
    span = _span("t", "s", 1, {prediction.DEFINITIONS: json.dumps(sent)})
    calls = [
        ("get_order", '{"orderId": "O-1"}', '{"orderId": "O-1", "paymentId": "P-1"}'),
        ("get_payment", '{"paymentId": "P-1"}', '{"paymentId": "P-1", "status": "captured"}'),
    ]
    least, most = prediction.estimate(400, span.attributes, calls)
    functions = prediction.sent_definitions(span.attributes)
    assert [f["name"] for f in functions] == ["get_order", "get_payment"]  # a Chat Completions tool unwrapped
    # The focused tool's definition between the smaller of the two and both: the bounds differ by exactly that.
    gap = tokens.count_tools(functions) - min(tokens.count_tools([f]) for f in functions)
    assert most - least == 2 * gap and least < most
    # Without the definitions, or without a result, nothing is estimated.
    assert prediction.estimate(400, {}, calls) is None
    assert prediction.estimate(400, span.attributes, [calls[0], ("get_payment", '{"paymentId": "P-1"}', None)]) is None

    tools = tuple(conventions.ToolCall(span, t, "", a, r, False, "", "") for t, a, r in calls)
    model = conventions.ModelCall(span, "m", "openai", 400, 1, 0, "", ())
    later = conventions.ModelCall(span, "m", "openai", 520, 1, 0, "", ())
    c = conversations.Conversation("k", (model, later, structs.replace(later, input_tokens=600)), tools, (0, 1), ("f",))
    counted = chains.Chains()
    counted.add(c)
    (chain,) = counted.ranked()
    assert chain.summary(1)["estimated"] == {
        "conversations": 1, "inputToday": 1520, "leastInput": least, "mostInput": most
    }  # fmt: skip


def test_an_estimated_saving_states_its_smaller_end_and_both_bounds():
    from wismo.runs.traces import analysis, prediction

    summary = {
        "inputTokensMean": 1500.0, "inputTokensSavedMean": 300.0, "predicted": [],
        "estimated": {"conversations": 2, "inputToday": 1520.0, "leastInput": 900.0, "mostInput": 1100.0},
    }  # fmt: skip
    saving = analysis._saving(summary, {"priced": False}, "provider-reported (imported traces)")
    assert saving["model"] == prediction.ESTIMATED and saving["savedBounds"] == [420.0, 620.0]
    assert saving["inputTokensSavedPerConversation"] == 420.0 and saving["inputTokensPerConversationToday"] == 1520.0


def test_spans_read_from_the_json_as_otlp_json_defines_it(tmp_path):
    # Read from the decoded JSON directly: proto field names as well as lowerCamelCase, 64-bit integers as numbers or
    # strings, enums as names or integers, unknown fields ignored; the same spans as the document's usual form.
    usual = list(otlp.read(CONVENTIONS))
    renamed = _document()
    renamed["somethingNewer"] = {"ignored": True}
    for resource in renamed["resourceSpans"]:
        resource["scope_spans"] = resource.pop("scopeSpans")
        for scope in resource["scope_spans"]:
            for span in scope["spans"]:
                span["trace_id"] = span.pop("traceId")
                span["start_time_unix_nano"] = int(span.pop("startTimeUnixNano"))
                span["status"] = {"code": "STATUS_CODE_ERROR"} if span["name"].startswith("execute_tool") else {}
                span["futureField"] = [1, 2, 3]
    read = list(otlp.read(_write_lines(tmp_path / "renamed.json", renamed)))
    assert [(s.trace_id, s.span_id, s.start_ns, s.attributes) for s in read] == [
        (s.trace_id, s.span_id, s.start_ns, s.attributes) for s in usual
    ]
    assert [s.failed for s in read] == [s.name.startswith("execute_tool") for s in usual]
    wrong = _document()
    _spans_of(wrong)[0]["kind"] = "SPAN_KIND_SIDEWAYS"
    error = _unreadable(_write_lines(tmp_path / "wrong-kind.json", wrong))
    assert error.line == 1 and "kind 'SPAN_KIND_SIDEWAYS' is none of SPAN_KIND_UNSPECIFIED" in error.problem
    wrong = _document()
    _spans_of(wrong)[1]["attributes"][0]["value"] = {"intValue": "many"}
    assert (
        "intValue must be a 64-bit integer, not 'many'"
        in _unreadable(_write_lines(tmp_path / "bad-int.json", wrong)).problem
    )


@pytest.mark.parametrize(
    ("pair", "read"),
    [
        ({"key": "a", "value": {"stringValue": "x"}}, {"a": "x"}),
        ({"key": "a", "value": {"string_value": "x"}}, {"a": "x"}),
        ({"key": "a", "value": {"stringValue": "x", "intValue": "3"}}, {"a": "x"}),  # the first field set
        ({"key": "a", "value": {"intValue": "3", "stringValue": "x"}}, {"a": 3}),
        ({"key": "a", "value": {"future": 1, "stringValue": "x"}}, {"a": "x"}),
        ({"value": {"stringValue": "x"}}, {"": "x"}),  # no key: the empty one, as protobuf's reader gives it
        ({"key": "a"}, {"a": None}),
        ({"key": "a", "value": {"arrayValue": {"values": [{"stringValue": "x"}]}}}, {"a": ["x"]}),
        ({"key": "a", "value": {"intValue": "412"}}, {"a": 412}),
        ({"key": "a", "value": {"intValue": 412}}, {"a": 412}),
        ({"key": "a", "value": {"intValue": "-5"}}, {"a": -5}),
        # Decimal text in ASCII digits only, as OTLP/JSON writes it: not another script's digits, no spaces or "_".
        ({"key": "a", "value": {"intValue": "\u0663"}}, "intValue must be a 64-bit integer, not '\u0663'"),
        ({"key": "a", "value": {"intValue": " 412"}}, "intValue must be a 64-bit integer, not ' 412'"),
        ({"key": "a", "value": {"intValue": "1_000"}}, "intValue must be a 64-bit integer, not '1_000'"),
        ({"key": "a", "value": {"intValue": "+5"}}, "intValue must be a 64-bit integer, not '+5'"),
        ({"key": "a", "value": {"doubleValue": "\uff11.5"}}, "doubleValue must be a number, not '\uff11.5'"),
        ({"key": "a", "value": {"doubleValue": "-Infinity"}}, {"a": float("-inf")}),
        ({"key": "a", "value": {"doubleValue": "1.5e3"}}, {"a": 1500.0}),
        ({"key": "a", "value": {"intValue": "18446744073709551615"}}, {"a": 2**64 - 1}),  # 20 digits: the checks
        ({"key": "a", "value": {"intValue": "18446744073709551616"}}, "intValue must be a 64-bit integer"),
        ({"key": "a", "value": {"intValue": None}}, {"a": 0}),
        ({"key": "a", "value": {"boolValue": True}}, {"a": True}),
        ({"key": "a", "value": None}, {"a": None}),
        ({"key": 5, "value": {"stringValue": "x"}}, "an attribute's key must be a string, not int"),
        (["key", "value"], "an attribute must be an object, not list"),
        ({"key": "a", "value": "x"}, "an attribute's value must be an object, not str"),
        ({"key": "a", "value": {"stringValue": 5}}, "stringValue must be a string, not int"),
    ],
)
def test_an_attribute_reads_as_the_general_walk_reads_it(pair, read):
    # A string value is read by a shortcut; every other shape, or a wrong one, by the general walk, in its words.
    if isinstance(read, dict):
        assert otlp._attributes([pair]) == read
    else:
        with pytest.raises(InputError, match=re.escape(read)):
            otlp._attributes([pair])


def test_a_line_reads_alike_by_orjson_and_by_json_and_an_integer_beyond_64_bits_is_refused_by_both(tmp_path):
    shipped = Path(__file__).parents[1] / "data" / "traces"
    for path in (CONVENTIONS, OPENLLMETRY, *sorted(shipped.glob("*.json"))):
        text = path.read_text(encoding="utf-8")
        try:
            documents = [text] if json.loads(text) else []  # one indented document
        except json.JSONDecodeError:
            documents = [line for line in text.splitlines() if line.strip()]  # the Collector's lines
        assert documents
        for number, document in enumerate(documents, start=1):
            fast, plain = otlp.decoded(document), json.loads(document)
            assert list(otlp._spans(fast, str(path), number)) == list(otlp._spans(plain, str(path), number))
    # What orjson refuses is json's to read: a NaN double reads as json reads it.
    nan = _document()
    _spans_of(nan)[1]["attributes"].append({"key": "x.score", "value": {"doubleValue": float("nan")}})
    (span,) = [s for s in otlp.read(_write_lines(tmp_path / "nan.json", nan)) if "x.score" in s.attributes]
    assert span.attributes["x.score"] != span.attributes["x.score"]  # NaN
    # Beyond 64 bits, orjson reads a number as a float and json as an int: refused either way, in the same words.
    for huge in (2**64, str(2**64), -(2**63) - 1):
        wide = _document()
        _spans_of(wide)[0]["startTimeUnixNano"] = huge
        assert (
            "startTimeUnixNano must be an unsigned 64-bit integer"
            in _unreadable(_write_lines(tmp_path / "wide.json", wide)).problem
        )
        _spans_of(wide)[0]["startTimeUnixNano"] = "1"
        _spans_of(wide)[0]["kind"] = huge
        assert "is none of SPAN_KIND_UNSPECIFIED" in _unreadable(_write_lines(tmp_path / "wide.json", wide)).problem
    for negative in ("-5", -5):  # a time is unsigned (fixed64)
        earlier = _document()
        _spans_of(earlier)[0]["startTimeUnixNano"] = negative
        assert (
            "must be an unsigned 64-bit integer, not '-5'"
            in _unreadable(_write_lines(tmp_path / "neg.json", earlier)).problem
        )
    # An enum's number is an int32: beyond it, refused as no kind.
    wide = _document()
    _spans_of(wide)[0]["kind"] = 2**40
    assert "kind '1099511627776' is none of" in _unreadable(_write_lines(tmp_path / "wide.json", wide)).problem


def _summary(conversations_read):
    return [
        (c.key, [m.span.span_id for m in c.model_calls], [t.tool for t in c.tool_calls]) for c in conversations_read
    ]


def test_compressed_globbed_and_remote_files_read_as_the_plain_one(tmp_path):
    import gzip

    import fsspec
    import zstandard

    plain = CONVENTIONS.read_bytes()
    (tmp_path / "a.json.gz").write_bytes(gzip.compress(plain))
    (tmp_path / "b.json.zst").write_bytes(zstandard.ZstdCompressor().compress(plain))
    with fsspec.open("memory://wismo-test/c.json", "wb") as remote:
        remote.write(plain)
    expected = [(s.span_id, s.attributes) for s in otlp.read(CONVENTIONS)]
    for where in (tmp_path / "a.json.gz", tmp_path / "b.json.zst", "memory://wismo-test/c.json"):
        assert [(s.span_id, s.attributes) for s in otlp.read(where)] == expected, where
    assert otlp.expand([str(tmp_path / "*.json.*")]) == [str(tmp_path / "a.json.gz"), str(tmp_path / "b.json.zst")]
    assert otlp.expand(["memory://wismo-test/*.json"])[0].endswith("wismo-test/c.json")
    assert _unreadable("memory://wismo-test/absent.json").problem == "cannot be read (No such file or directory)"
    with pytest.raises(otlp.TraceUnreadable, match="matches no file"):
        otlp.expand([str(tmp_path / "*.none")])
    (tmp_path / "cut.json.gz").write_bytes(gzip.compress(plain)[:-20])
    assert "cannot be decompressed" in _unreadable(tmp_path / "cut.json.gz").problem
    (tmp_path / "cut.json.zst").write_bytes(zstandard.ZstdCompressor().compress(plain)[:-20])
    assert "cannot be decompressed" in _unreadable(tmp_path / "cut.json.zst").problem
    # The Collector's exporter may write a frame per batch: lines from several frames read as one file's.
    lines = json.dumps(_document(), separators=(",", ":")).encode() + b"\n"
    (tmp_path / "frames.json.zst").write_bytes(b"".join(zstandard.ZstdCompressor().compress(lines) for _ in range(3)))
    assert [s.line for s in otlp.read(tmp_path / "frames.json.zst")] == [1] * 9 + [2] * 9 + [3] * 9


def test_a_conversation_split_across_two_files_is_one(tmp_path):
    # The Collector rotates its file mid-conversation: the spans before go to one file, those after to the next.
    document = _document()
    spans = _spans_of(document)
    first, second = _document(), _document()
    _spans_of(first)[:] = spans[:4]
    _spans_of(second)[:] = spans[4:]
    a = _write_lines(tmp_path / "traces-1.json", first)
    b = _write_lines(tmp_path / "traces-2.json", second)
    whole, _ = _read(CONVENTIONS)
    split, tally = _read(a, b)
    assert len(whole) == 1 and _summary(split) == _summary(whole) and tally.conversations == 1
    newest_first, _ = _read(b, a)
    assert _summary(newest_first) == _summary(whole)


@pytest.fixture(scope="module")
def threads():
    """A Dask cluster of two workers in this process (threads): the partitioned pipeline's logic, without the
    processes a real cluster runs (test_traces_cli starts those)."""
    from distributed import Client

    with Client(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None) as client:
        yield client


def _pipeline(client, paths, chunk):
    from wismo.runs.traces import partitioned

    tally = conversations.Tally()
    found = [f for f, _ in partitioned.run(client, [str(p) for p in paths], conversations.IDLE_NS, tally, chunk=chunk)]
    return found, tally


def _one_pass(paths):
    tally = conversations.Tally()
    spans = (s for p in paths for s in otlp.read(p))
    return [chains.facts(c) for c in conversations.conversations(spans, tally)], tally


def _lines_with_a_split_conversation(path: Path) -> Path:
    """Generated conversations, one a line, with one more conversation's spans on the first and the last line."""
    from wismo.bench.trace_file import generate

    generated = path.with_suffix(".generated")
    generate(generated, 20_000)
    spans = _spans_of(_document())
    halves = [_document(), _document()]
    _spans_of(halves[0])[:] = spans[:4]
    _spans_of(halves[1])[:] = spans[4:]
    first, last = (json.dumps(h, separators=(",", ":")) + "\n" for h in halves)
    path.write_text(first + generated.read_text(encoding="utf-8") + last, encoding="utf-8")
    return path


def test_a_long_session_is_a_conversation_per_question_in_one_pass_and_in_parts(tmp_path, threads):
    from wismo.bench.trace_file import SESSION, generate

    path = tmp_path / "session.json"
    generate(path, 200_000, session=True)
    alone, _ = _one_pass([path])
    assert len(alone) > 10 and [f.key for f in alone] == [SESSION] + [
        f"{SESSION} #{n}" for n in range(2, len(alone) + 1)
    ]
    assert all(f.links for f in alone)  # each question's links found, however many came before it
    found, _ = _pipeline(threads, [path], 5000)
    assert sorted(found, key=lambda f: f.key) == sorted(alone, key=lambda f: f.key)


def test_a_file_read_in_parts_gives_the_conversations_of_one_pass_one_across_the_parts_too(tmp_path, threads):
    from wismo.runs.traces import partitioned

    path = _lines_with_a_split_conversation(tmp_path / "rotated.json")
    assert len(partitioned.plan([str(path)], 3000)) > 5  # many byte ranges: the split conversation spans them
    found, tally = _pipeline(threads, [path], 3000)
    alone, alone_tally = _one_pass([path])
    assert sorted(found, key=lambda f: f.key) == sorted(alone, key=lambda f: f.key)
    assert tally == alone_tally and tally.conversations > 5
    (split,) = [
        f for f in found if f.key == "conv_5j66UpCpwteGg4YSxUnt7lPY"
    ]  # the conventions example's conversation, whole
    assert split.model_calls == 3 and split.steps == (("get_order", 1), ("get_tracking", 1))
    # The same parts whatever their size: the facts come in the order of their first call.
    assert [f.key for f in _pipeline(threads, [path], 7000)[0]] == [f.key for f in found]


def test_the_first_bad_line_is_said_by_its_line_in_the_file_whichever_part_holds_it(tmp_path, threads):
    from wismo.bench.trace_file import generate

    path = tmp_path / "bad.json"
    generate(path, 250_000)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    late = [*lines[:11], '{"resourceSpans": [\n', *lines[11:]]
    path.write_text("".join(late), encoding="utf-8")
    with pytest.raises(otlp.TraceUnreadable) as caught:
        _pipeline(threads, [path], 2000)
    one_pass = _unreadable(path)
    assert (caught.value.line, caught.value.problem) == (one_pass.line, one_pass.problem) and one_pass.line == 12
    # A span lacking its tokens on line 5 comes before the bad JSON on line 12, as in one pass.
    document = json.loads(late[4])
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                span["attributes"] = [a for a in span["attributes"] if a["key"] != "gen_ai.usage.input_tokens"]
    late[4] = json.dumps(document) + "\n"
    path.write_text("".join(late), encoding="utf-8")
    with pytest.raises(otlp.TraceUnreadable) as caught:
        _pipeline(threads, [path], 2000)
    assert caught.value.line == 5 == _unreadable(path).line and "gen_ai.usage.input_tokens" in caught.value.problem


def test_the_parts_are_read_as_one_pass_reads_them_where_orjson_refuses_a_line(tmp_path, threads):
    # A lone surrogate (a truncated emoji in captured content) is refused by orjson and read by json: the scan must
    # still find the conversation that line names, or its halves in two files would be two conversations.
    path = _lines_with_a_split_conversation(tmp_path / "rotated.json")
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    first = json.loads(lines[0])
    _spans_of(first)[0]["attributes"].append({"key": "x.note", "value": {"stringValue": "PLACEHOLDER"}})
    lines[0] = json.dumps(first, separators=(",", ":")).replace("PLACEHOLDER", "\\ud83d") + "\n"
    second = tmp_path / "second.json"
    second.write_text(lines[-1], encoding="utf-8")
    path.write_text("".join(lines[:-1]), encoding="utf-8")
    found, tally = _pipeline(threads, [path, second], 3000)
    alone, alone_tally = _one_pass([path, second])
    assert sorted(found, key=lambda f: f.key) == sorted(alone, key=lambda f: f.key) and tally == alone_tally
    assert [f.model_calls for f in found if f.key == "conv_5j66UpCpwteGg4YSxUnt7lPY"] == [3]


def test_a_line_has_one_number_whether_its_file_is_read_whole_or_in_parts(tmp_path, threads):
    from wismo.bench.trace_file import generate

    path = tmp_path / "lines.json"
    generate(path, 250_000)
    lines = path.read_bytes().splitlines(keepends=True)
    # A carriage return is JSON's whitespace inside a line, not the end of one.
    lines[3] = lines[3].replace(b'{"resourceSpans":', b'{\r"resourceSpans":', 1)
    path.write_bytes(b"".join(lines))
    assert [f.key for f in _pipeline(threads, [path], 2000)[0]] == [f.key for f in _one_pass([path])[0]]
    # Bytes that are not UTF-8 on line 9: that line, read whole or in parts.
    lines[8] = lines[8].replace(b"get_order", b"get_\xffrder", 1)
    path.write_bytes(b"".join(lines))
    with pytest.raises(otlp.TraceUnreadable) as caught:
        _pipeline(threads, [path], 2000)
    assert caught.value.line == _unreadable(path).line == 9 and caught.value.problem == "not UTF-8 text"


def test_a_compressed_file_cut_short_is_said_so_by_the_pipeline_too(tmp_path, threads):
    import gzip

    from wismo.bench.trace_file import generate

    plain = tmp_path / "plain.json"
    generate(plain, 100_000)
    cut = tmp_path / "cut.json.gz"
    packed = gzip.compress(plain.read_bytes())
    cut.write_bytes(packed[: len(packed) // 2])
    with pytest.raises(otlp.TraceUnreadable) as caught:
        _pipeline(threads, [cut], 2000)
    one_pass = _unreadable(cut)
    assert (caught.value.line, caught.value.problem) == (one_pass.line, one_pass.problem)
    assert "cannot be decompressed" in one_pass.problem


def test_a_shared_conversation_is_built_alike_whatever_the_bucket_it_shares(monkeypatch):
    from wismo.runs.traces import partitioned

    # Sweeps every few spans: a group built after another in its bucket must be built as it is alone.
    monkeypatch.setattr(conversations, "SWEEP_EVERY", 4)
    idle = 10

    def span(trace: str, span_id: str, conversation: str, end: int, line: int, tool: bool = False) -> otlp.Span:
        attributes: dict[str, object] = (
            {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup"}
            if tool
            else {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 5, "gen_ai.usage.output_tokens": 1}
        )
        attributes["gen_ai.conversation.id"] = conversation
        return otlp.Span(trace * 32, span_id * 16, "", "x", 3, end, end, attributes, False, "", "f.json", line)

    group = [
        span("1", "1", "A", 0, 10),
        span("1", "5", "A", 0, 10, tool=True),
        span("1", "2", "B", 0, 11),
        span("2", "3", "B", 2 * idle, 12),
        span("3", "4", "A", 2 * idle + 1, 13),
    ]
    other = [span("9", "9", "Z", 0, 1)]
    group_of = {"1" * 32: "g1", "2" * 32: "g1", "3" * 32: "g1", "9" * 32: "g0"}

    def built(spans: list[otlp.Span]) -> list:
        found = partitioned._build_shared([[(0, s) for s in spans]], group_of, idle, [], False).found
        return sorted((f.key, f.model_calls, f.steps) for _, f, _ in found if f.key != "Z")

    assert built(other + group) == built(group) != []


def test_spans_and_calls_are_not_traced_by_the_cycle_collector_and_travel_to_workers_whole():
    # Untracked, the spans of the open conversations cost the collector nothing; nothing in them refers back to
    # them, so no cycle is missed. Pickled (to a Dask worker and back), each is the same span.
    spans = [s for p in (CONVENTIONS, OPENLLMETRY) for s in otlp.read(p)]
    calls = [c for s in spans if (c := conventions.model_call(s) or conventions.tool_call(s)) is not None]
    assert spans and any(isinstance(c, conventions.ModelCall) for c in calls)
    assert any(isinstance(c, conventions.ToolCall) for c in calls)
    assert not any(gc.is_tracked(x) for x in [*spans, *calls])
    assert [pickle.loads(pickle.dumps(x)) for x in [*spans, *calls]] == [*spans, *calls]


def test_open_conversations_are_not_traced_by_the_cycle_collector(monkeypatch):
    # Open for the idle window, a tracked conversation's lists and sets outlived the collector's young passes and
    # set off its full passes over every object of the process; held in dicts of untracked calls, none is tracked.
    closing = conversations._closed
    seen = []

    def closed(bucket, tally):
        seen.append([bucket, bucket.models, bucket.tools, bucket.parents, bucket.traces, bucket.sources])
        return closing(bucket, tally)

    monkeypatch.setattr(conversations, "_closed", closed)
    spans = [
        _chat("t1", "a", 1, ""),  # a trace that names no conversation yet, then one: the first bucket absorbed
        _tool("t1", "b", 2, "get_order"),
        _chat("t1", "c", 3, "k"),
        *[s for p in (CONVENTIONS, OPENLLMETRY) for s in otlp.read(p)],
    ]
    assert list(conversations.conversations(spans, conversations.Tally()))
    assert len(seen) > 2 and all(bucket[1] or bucket[2] for bucket in seen)
    assert not any(gc.is_tracked(x) for bucket in seen for x in bucket)


def test_spans_read_twice_are_counted_once_in_one_pass_and_in_parts(tmp_path, threads):
    # A copy of a file under another name, a batch the Collector sent again: each span of it is read once.
    copy = tmp_path / "copy.json"
    copy.write_bytes(CONVENTIONS.read_bytes())
    alone, alone_tally = _one_pass([CONVENTIONS])
    twice, tally = _one_pass([CONVENTIONS, copy])
    spans = len(list(otlp.read(CONVENTIONS)))
    assert twice == alone and tally.duplicate_spans == spans and tally.spans == 2 * spans
    assert dataclasses.replace(tally, spans=spans, duplicate_spans=0) == alone_tally
    retried = _write_lines(tmp_path / "retried.json", _document(), _document())
    assert _one_pass([retried])[0] == alone
    found, parts_tally = _pipeline(threads, [CONVENTIONS, copy], 3000)
    assert found == alone and parts_tally == tally
    # The same span id in two traces of one conversation is two spans, not one read twice.
    spans_of_two = [_chat("t1", "a", 1, "c-1"), _chat("t2", "a", 2, "c-1"), _chat("t1", "a", 1, "c-1")]
    counted = conversations.Tally()
    questions = list(conversations.conversations(spans_of_two, counted))  # two answers: a question each
    assert sum(len(q.model_calls) for q in questions) == 2 and counted.duplicate_spans == 1
    # The second trace's span of that id read again: known as the second trace's, not the first's.
    second_again = [_chat("t1", "a", 1, "c-1"), _chat("t2", "a", 2, "c-1"), _chat("t2", "a", 2, "c-1")]
    counted = conversations.Tally()
    list(conversations.conversations(second_again, counted))
    assert counted.duplicate_spans == 1 and counted.model_call_spans == 2
    # The same when the second trace's span came in a conversation absorbed later.
    absorbed = [
        _chat("t1", "a", 1, "c-1"),
        _tool("t2", "a", 2, "get_order"),  # its trace names no conversation yet
        _chat("t2", "b", 3, "c-1"),  # now it does: c-1 absorbs it
        _tool("t2", "a", 2, "get_order"),
    ]
    counted = conversations.Tally()
    list(conversations.conversations(absorbed, counted))
    assert counted.duplicate_spans == 1 and counted.tool_call_spans == 1
    # A span read before its trace named the conversation, and again after: once.
    named_late = [_tool("t1", "a", 1, "get_order"), _chat("t1", "b", 2, "c-1"), _tool("t1", "a", 1, "get_order")]
    counted = conversations.Tally()
    (conversation,) = conversations.conversations(named_late, counted)
    assert len(conversation.tool_calls) == 1 and counted.duplicate_spans == 1


def test_files_of_the_same_bytes_are_found_by_inode_size_and_hash_and_pipes_never_read(tmp_path, monkeypatch):
    import os

    a, b, c, d, e = (tmp_path / f"{n}.json" for n in "abcde")
    a.write_bytes(b"one")
    b.write_bytes(b"one")
    c.write_bytes(b"two")  # the same size, other bytes
    d.write_bytes(b"three")
    e.hardlink_to(a)
    pipes = [os.pipe() for _ in range(2)]  # what <(...) gives: size 0, its bytes gone once read
    for _, w in pipes:
        os.write(w, b"one")
        os.close(w)
    (tmp_path / "empty.json").write_bytes(b"")
    files = (
        [str(p) for p in (e, b, c, d, a)] + [f"/proc/self/fd/{r}" for r, _ in pipes] + [str(tmp_path / "empty.json")]
    )
    read: list[str] = []
    digest = otlp._digest
    monkeypatch.setattr(otlp, "_digest", lambda path: read.append(path) or digest(path))
    assert otlp.same_bytes(files) == {str(b): str(e), str(a): str(e)}  # in the order named, each with the first
    assert sorted(read) == sorted([str(e), str(b), str(c)])  # a hard link by its inode; a size of its own never
    assert [os.read(r, 10) for r, _ in pipes] == [b"one", b"one"]


def test_a_file_named_twice_is_read_once_and_a_file_url_as_its_path(tmp_path):
    path = tmp_path / "a.json"
    path.write_bytes(CONVENTIONS.read_bytes())
    named = [str(path), str(tmp_path / "*.json"), f"{tmp_path}/../{tmp_path.name}/a.json", f"file://{path}"]
    assert otlp.expand(named) == [str(path)]
    assert otlp.expand([f"file://{tmp_path}/*.json"]) == [str(path)]
    assert [s.span_id for s in otlp.read(f"file://{path}")] == [s.span_id for s in otlp.read(path)]
    assert otlp.named(f"file://localhost{path}") == str(path)
    assert otlp.local(f"file://elsewhere{path}") == f"file://elsewhere{path}"  # another host's file is not this one
    # A glob on a filesystem fsspec cannot reach (its package not installed, say): one sentence, not a traceback.
    with pytest.raises(otlp.TraceUnreadable, match=r"^nosuchfs://b/\*\.json: cannot be listed \(.+\)\.$"):
        otlp.expand(["nosuchfs://b/*.json"])


def test_a_sigterm_while_the_local_cluster_starts_is_acted_on_once_it_is_whole_and_it_is_closed(monkeypatch):
    # The signal comes in the middle of the start (a stand-in for the cluster, to send it there and nowhere else).
    import os
    import signal

    import distributed

    from wismo.core import processes
    from wismo.runs.traces import partitioned

    closed: list[bool] = []
    ignoring: list[object] = []

    class Starting:
        def __init__(self, **_options):
            ignoring.append(signal.getsignal(signal.SIGINT))  # what the workers would inherit
            os.kill(os.getpid(), signal.SIGTERM)

        def close(self):
            closed.append(True)

    monkeypatch.setattr(distributed, "LocalCluster", Starting)
    with pytest.raises(processes.Interrupted), processes.interruptible(stop=False):
        partitioned.local_cluster(2)
    assert closed == [True] and ignoring == [signal.SIG_IGN]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back
