"""Large orders, the scoped design's caps and cursors (no lost evidence), and the loop's budget outcomes."""

import json

import pytest

from article import converse
from wismo.accounting import tokens
from wismo.accounting.tokens import counting
from wismo.core.errors import ClaimFailed
from wismo.core.jsonfmt import compact
from wismo.domain import load, support_context
from wismo.domain import pages as page_format
from wismo.domain.generate import generate, order_id, sizes_from
from wismo.mcp.client import pool
from wismo.mcp.client.connection import connect
from wismo.mcp.servers import paging
from wismo.mcp.servers.settings import server_dataset
from wismo.reports.analyses import sweep
from wismo.runs import verify_trace
from wismo.runs.agent.base import Reply, Usage, assistant_message
from wismo.runs.agent.loop import Budgets
from wismo.runs.agent.scripted import ScriptedBackend

SWEEP = [1, 10, 100, 1000, 10000]


def test_generator_is_deterministic_and_has_the_awkward_cases():
    a, b, c = generate(1000, seed=0), generate(1000, seed=0), generate(1000, seed=1)
    assert a == b and a != c
    order = a["orders"][0]
    assert order["orderId"] == order_id(1000) == "ORD-901000" and len(order["items"]) == 1000
    unavailable = [t for t in a["tracking"] if t["availability"] == "unavailable"]
    assert 10 < len(unavailable) < 60
    assert len(a["reservations"]) < len(order["reservationIds"]), "some linked reservations have no record"
    assert len(a["tracking"]) < len(order["trackingIds"]), "some shipments have no carrier record"
    with pytest.raises(ValueError, match="1 to 99999 lines"):
        order_id(0)


def test_large_orders_are_served_by_setting_not_written(monkeypatch):
    monkeypatch.setenv("WISMO_LARGE_ORDERS", "10,100")
    ds = server_dataset()
    assert len(ds.get(__import__("wismo.domain", fromlist=["ORDER"]).ORDER, "ORD-900100")["items"]) == 100
    assert sizes_from("1, 10") == [1, 10]
    with pytest.raises(ValueError, match="comma-separated line counts"):
        sizes_from("ten")


def _pages(ctx, fmt, cap=page_format.DEFAULT_CAP):
    pages, cursor = [], None
    while True:
        page = paging.page(ctx, cursor, fmt, cap)
        pages.append(page)
        cursor = page["page"]["next"]
        if cursor is None:
            return pages


@pytest.mark.slow
@pytest.mark.parametrize("lines", SWEEP)
def test_following_every_cursor_reconstructs_the_focused_answer_exactly(lines):
    ds = load(large=[lines])
    ctx = support_context(ds, order_id(lines))
    for fmt, want in (("detailed", ctx), ("concise", page_format.concise_view(ctx))):
        pages = _pages(ctx, fmt)
        assert compact(page_format.merge(pages)) == compact(want)
        for page in pages:
            assert tokens.count_text(compact(page)) <= page_format.DEFAULT_CAP
            note = page["page"]["leftOut"]
            if page["page"]["next"]:
                assert f'cursor "{page["page"]["next"]}"' in note and "Left out of this page" in note
            else:
                assert "nothing was left out" in note
            if fmt == "concise":
                assert 'format "detailed"' in note


def test_a_smaller_cap_holds_too_and_an_impossible_one_is_refused():
    ctx = support_context(load(large=[100]), "ORD-900100")
    pages = _pages(ctx, "detailed", cap=600)
    assert len(pages) > 8 and all(tokens.count_text(compact(p)) <= 600 for p in pages)
    assert page_format.merge(pages) == ctx
    with pytest.raises(paging.PagingError, match="the cap of 100 tokens cannot hold one record"):
        paging.page(ctx, None, "detailed", 100)


def test_bad_cursors_and_formats_are_named():
    ctx = support_context(load(), "ORD-1004")
    for bad in ("p1.999.0.0.0.0", "hello", "p1.1.1"):
        with pytest.raises(paging.CursorError, match="cursor is not one this server issued"):
            paging.page(ctx, bad)
    with pytest.raises(paging.CursorError, match="format must be one of concise, detailed"):
        paging.page(ctx, None, "verbose")
    # Found by the fuzzer: a megabyte-long format used to be echoed whole.
    with pytest.raises(paging.CursorError) as err:
        paging.page(ctx, None, "A" * 1_000_000)
    assert len(str(err.value)) < 120 and str(err.value).endswith(".")


pytestmark_anyio = pytest.mark.anyio


@pytest.mark.slow
@pytest.mark.anyio
async def test_scoped_server_pages_rebuild_the_focused_servers_answer_byte_for_byte():
    env = sweep.server_env([1000])
    async with connect("focused", env=env) as focused, connect("scoped", env=env) as scoped:
        for oid in ("ORD-1004", "ORD-1005", "ORD-1007", "ORD-901000"):
            whole = (await focused.call("get_order_support_context", {"orderId": oid})).text
            pages, cursor = [], None
            while True:
                args = {"orderId": oid, "format": "detailed", **({"cursor": cursor} if cursor else {})}
                result = await scoped.call("get_order_support_context", args)
                assert not result.is_error
                pages.append(json.loads(result.text))
                cursor = pages[-1]["page"]["next"]
                if cursor is None:
                    break
            assert compact(page_format.merge(pages)) == whole
        bad = await scoped.call("get_order_support_context", {"orderId": "ORD-1004", "cursor": 7})
        assert bad.is_error and bad.text == "cursor must be the string a previous page gave as next."
        assert not (await scoped.call("get_order_support_context", {"orderId": "ORD-1004"})).is_error


@pytest.mark.slow
@pytest.mark.anyio
async def test_measure_on_a_small_sweep():
    rows, checks = await sweep.measure([1, 100])
    assert all(c["pages merge to the focused answer"] for c in checks)
    by = {(r["design"], r["lines"]): r for r in rows}
    assert by[("granular", 100)]["toolCalls"] > 100 and by[("focused", 100)]["toolCalls"] == 1
    assert by[("scoped", 100)]["modelTurns"] == by[("scoped", 100)]["toolCalls"] + 1 > 2
    assert by[("scoped", 100)]["largestResultTokens"] <= page_format.DEFAULT_CAP
    await pool.stop_all()


@pytest.fixture
def starts(monkeypatch):
    """The servers the pool starts, as (design, served sizes), in order."""
    started = []
    real = pool.connect

    def counting(design, **kw):
        started.append((design, kw["env"]["WISMO_LARGE_ORDERS"]))
        return real(design, **kw)

    monkeypatch.setattr(pool, "connect", counting)
    return started


@pytest.mark.anyio
async def test_a_report_starts_each_designs_server_once_and_reuse_changes_no_figure(starts):
    budgets = Budgets(max_turns=100, max_tool_calls=12, max_input_tokens=20000)
    fresh = await sweep.budgeted_sessions([10], budgets)  # alone: servers of its own, stopped at its end
    assert len(starts) == 3 and pool.running() == {}
    await sweep.measure([1])
    await sweep.measure([1, 10])  # serves an order the kept servers do not: each is replaced once
    assert sorted(starts[3:]) == sorted(
        [(d, "1") for d in sweep.scale_designs()] + [(d, "1,10") for d in sweep.scale_designs()]
    )
    assert pool.running() == {d: frozenset({1, 10}) for d in sweep.scale_designs()}
    reused = await sweep.budgeted_sessions([10], budgets)  # the orders of 10 lines are served: no new start
    assert len(starts) == 9 and pool.running() == {}
    assert reused == fresh


@pytest.mark.anyio
async def test_a_failed_step_does_not_leave_its_server_for_the_next(starts):
    with pytest.raises(RuntimeError, match="the step failed"):
        async with pool.server("focused", [1], None, sweep.server_env([1])) as conn:
            assert not (await conn.call("get_order_support_context", {"orderId": order_id(1)})).is_error
            raise RuntimeError("the step failed")
    assert pool.running() == {}


@pytest.mark.anyio
async def test_every_design_at_once_raises_a_failure_as_itself():
    async def work(design):
        if design == "focused":
            raise ValueError("focused broke")
        return design

    assert await sweep.each_design(lambda d: _echo(d)) == {d: d for d in sweep.scale_designs()}
    with pytest.raises(ValueError, match="focused broke"):
        await sweep.each_design(work)


async def _echo(value):
    return value


async def _session(design, oid, budgets, sizes=(1000,), backend=None, **kw):
    async with connect(design, env=sweep.server_env(list(sizes)), timeout_s=60) as conn:
        tools = await conn.list_tools()
        return await converse(backend or ScriptedBackend(), conn, tools, oid, budgets, **kw)


@pytest.mark.anyio
async def test_token_budget_stops_and_says_what_was_read_and_what_is_missing():
    trace = await _session("scoped", "ORD-901000", Budgets(max_turns=100, max_input_tokens=20000))
    assert trace["outcome"] == "token budget exhausted" and trace["answer"] is None
    assert trace["totals"]["inputTokens"] <= 20000
    note = trace["answerText"]
    assert "input-token budget of 20,000 would be exceeded" in note and "Read: get_order_support_context" in note
    assert "Not read or not answered: get_order_support_context" in note and "Narrow the question" in note
    assert verify_trace(trace, "t") == []


@pytest.mark.anyio
async def test_tool_call_limit_of_twelve_stops_the_granular_design_on_a_big_order():
    trace = await _session("granular", "ORD-901000", Budgets())
    assert trace["outcome"] == "tool-call budget exhausted" and trace["totals"]["toolCalls"] == 1
    assert "over the session's limit of 12" in trace["answerText"] and "get_reservation" in trace["answerText"]


@pytest.mark.anyio
async def test_turn_budget_note():
    trace = await _session("scoped", "ORD-901000", Budgets(max_turns=3))
    assert trace["outcome"] == "turn budget exhausted" and "limit of 3 model requests" in trace["answerText"]


class Repeater:
    """Asks for the same order three times, then answers."""

    name, model, token_label = "test", "test", "tiktoken-estimated"

    async def respond(self, instructions, functions, items):
        made = sum(1 for i in items if i.get("type") == "function_call")
        if made < 3:
            return Reply([tokens.function_call("get_order", {"orderId": "ORD-1004"}, f"c{made}")], Usage(10, 5))
        return Reply([assistant_message(json.dumps({"offered": [f["name"] for f in functions]}))], Usage(10, 5))


@pytest.mark.anyio
async def test_repeated_calls_are_answered_from_the_earlier_result_and_counted():
    trace = await _session("granular", "ORD-1004", Budgets(), backend=Repeater(), cache_repeats=True)
    cached = [c.get("cached", False) for c in trace["toolCalls"]]
    assert cached == [False, True, True]
    assert verify_trace(trace, "t") == []


@pytest.mark.anyio
async def test_the_number_of_tool_definitions_sent_is_capped():
    trace = await _session("granular", "ORD-1004", Budgets(max_tools=2), backend=Repeater())
    assert trace["answer"]["offered"] == ["get_order", "get_payment"]


def test_the_notebook_checks_raise_with_the_numbers():
    rows = [{"design": "scoped", "largestResultTokens": 2001}, {"design": "focused", "largestResultTokens": 99999}]
    with pytest.raises(ClaimFailed, match="2001 tokens, over the cap of 2000"):
        sweep.check_cap(rows, 2000)
    assert sweep.check_cap(rows[1:] + [{"design": "scoped", "largestResultTokens": 1999}], 2000) == 1999
    with pytest.raises(ClaimFailed, match=r"orders of \[100\] lines"):
        sweep.check_reconstruction(
            [
                {"lines": 10, "pages merge to the focused answer": True},
                {"lines": 100, "pages merge to the focused answer": False},
            ]
        )


def test_token_counts_are_remembered_within_a_character_bound():
    counts = counting._Counts(max_chars=10)
    counts.put(("e", "abcdef"), 2)
    counts.put(("e", "ghij"), 1)
    assert counts.get(("e", "abcdef")) == 2  # now the most recently used
    counts.put(("e", "klm"), 1)  # 13 characters kept: the least recently used text goes
    assert counts.get(("e", "ghij")) is None and counts.get(("e", "abcdef")) == 2 and counts.get(("e", "klm")) == 1
    counts.put(("e", "x" * 11), 5)  # over the whole bound: never kept
    assert counts.get(("e", "x" * 11)) is None
    # A remembered count is the count, special-token strings counted as plain text.
    text = "<|endoftext|> an order of 10,000 lines"
    direct = len(tokens.encoding("o200k_base").encode(text, disallowed_special=()))
    assert tokens.count_text(text) == tokens.count_text(text) == direct


def test_the_unbounded_session_claim_is_said_not_checked_where_nothing_is_paged():
    from wismo.core.errors import ClaimFailed
    from wismo.reports import scale as report

    def rows(paged_calls, paged_total):
        return {
            "rows": [
                {"design": report.ONE_CALL, "lines": 10, "toolCalls": 1, "totalInput": 2305},
                {"design": report.PAGED, "lines": 10, "toolCalls": paged_calls, "totalInput": paged_total},
            ]
        }

    # One page, as a run by hand on small orders has: nothing paged, said so, not failed.
    assert report.check_session_unbounded(rows(1, 2282)).startswith("Not checked in this run: at 10 lines")
    assert report.check_session_unbounded(rows(3, 9000)).startswith("Checked: at 10 lines the paged session")
    with pytest.raises(ClaimFailed):
        report.check_session_unbounded(rows(3, 2000))
