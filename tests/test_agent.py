"""The agent loop over the servers (their SDK server objects in process): the scripted investigation, concurrency,
budgets, refusals."""

import json

import pytest

from article import converse
from inmemory import served
from wismo.accounting import tokens
from wismo.core import reference
from wismo.runs import scoring, verify_trace
from wismo.runs.agent.base import Reply, Usage, assistant_message
from wismo.runs.agent.loop import Budgets, LatencyModel
from wismo.runs.agent.scripted import ScriptedBackend

pytestmark = pytest.mark.anyio


async def _run(design, order_id, backend=None, **kw):
    async with served(design) as conn:  # the loop's behaviour, not the transport's: the server object in process
        tools = await conn.list_tools()
        return await converse(backend or ScriptedBackend(), conn, tools, order_id, **kw)


async def test_granular_investigation_follows_the_article():
    trace = await _run("granular", "ORD-1004", latency=LatencyModel(400, 0.05, 12))
    assert trace["outcome"] == "answered" and trace["totals"]["turns"] == 3
    asked = [[o["name"] for o in r["output"] if o["type"] == "function_call"] for r in trace["requests"]]
    assert asked == [["get_order"], ["get_payment", "get_reservation", "get_reservation", "get_tracking"], []]
    # Every request resends the whole history: its new items are exactly what the previous turn added.
    assert [len(r["newItems"]) for r in trace["requests"]] == [1, 2, 8]
    inputs = [r["usage"]["inputTokens"] for r in trace["requests"]]
    assert inputs == sorted(inputs) and len(set(inputs)) == 3
    assert all(
        r["modelledElapsedMs"]
        == LatencyModel(400, 0.05, 12).elapsed_ms(r["usage"]["inputTokens"], r["usage"]["outputTokens"])
        for r in trace["requests"]
    )
    assert scoring.score(trace["answer"], scoring.load_expectations()["ORD-1004"])["passed"]
    assert verify_trace({**trace, "totals": trace["totals"]}, "t") == []


async def test_scripted_call_ids_have_a_real_models_length_and_are_derived_from_the_conversation():
    first, again = await _run("granular", "ORD-1004"), await _run("granular", "ORD-1004")
    ids = [o["call_id"] for r in first["requests"] for o in r["output"] if o["type"] == "function_call"]
    published = reference.load("where-is-my-order")["ORD-1004"]["granular"]["firstCallId"]
    assert len(ids) == len(set(ids)) == 5
    assert all(len(i) == len(published) and i.startswith("call_") and i[5:].isalnum() for i in ids)
    assert ids == [o["call_id"] for r in again["requests"] for o in r["output"] if o["type"] == "function_call"]
    other = await _run("granular", "ORD-1002")
    assert not set(ids) & {o["call_id"] for r in other["requests"] for o in r["output"] if o.get("call_id")}


async def test_focused_investigation_is_one_call_then_the_answer():
    trace = await _run("focused", "ORD-1005")
    assert trace["totals"]["turns"] == 2 and trace["totals"]["toolCalls"] == 1
    assert trace["answer"]["missingEvidence"] == ["TRK-1005-A"]
    assert (
        scoring.summary_flags(
            trace["answer"]["customerSummary"],
            __import__("wismo.runs.agent.evidence", fromlist=["x"]).from_items(
                [i for r in trace["requests"] for i in r["newItems"] + r["output"]]
            ),
        )
        == []
    )


async def test_turn_budget_stops_with_a_defined_outcome():
    trace = await _run("granular", "ORD-1004", budgets=Budgets(max_turns=2))
    assert trace["outcome"] == "turn budget exhausted" and trace["answer"] is None and trace["totals"]["turns"] == 2


async def test_tool_call_budget_stops_before_running_the_calls():
    trace = await _run("granular", "ORD-1004", budgets=Budgets(max_tool_calls=3))
    assert trace["outcome"] == "tool-call budget exhausted"
    assert trace["totals"]["toolCalls"] == 1  # get_order ran; the four linked lookups would have made 5
    assert verify_trace(trace, "t") == []


class Misbehaving:
    """A backend that asks for a tool the server does not have, then for a real one with broken arguments."""

    name, model, token_label = "test", "test", "tiktoken-estimated"

    def __init__(self):
        self.turn = 0

    async def respond(self, instructions, functions, items):
        self.turn += 1
        if self.turn == 1:
            return Reply(
                [
                    tokens.function_call("drop_database", {}, "c1"),
                    {"type": "function_call", "name": "get_order", "arguments": "{not json", "call_id": "c2"},
                    tokens.function_call("get_order", {"orderId": "ORD-1001"}, "c3"),
                ],
                Usage(10, 5),
            )
        return Reply(
            [
                assistant_message(
                    json.dumps({"seen": [i["output"][:60] for i in items if i.get("type") == "function_call_output"]})
                )
            ],
            Usage(20, 5),
        )


async def test_an_unknown_tool_ends_the_conversation_with_a_named_outcome_and_nothing_run():
    trace = await _run("granular", "ORD-1001", backend=Misbehaving())
    assert trace["outcome"] == "unknown tool requested" and trace["toolCalls"] == [] and trace["answer"] is None
    assert trace["reason"].startswith(
        "Request 1: the model asked for 'drop_database', which is not one of the offered tools"
    )
    assert verify_trace(trace, "t", ["get_order", "get_payment", "get_reservation", "get_tracking"]) == []


@pytest.mark.anyio
async def test_the_scripted_backend_estimates_under_a_client_profile():
    from wismo.runs.agent.scripted import ScriptedBackend

    totals = {}
    async with served("granular") as conn:
        tools = await conn.list_tools()
        for profile in ("python", "csharp-raw-element"):
            backend = ScriptedBackend(profile=profile)
            trace = await converse(backend, conn, tools, "ORD-1004")
            totals[profile] = [r["usage"]["inputTokens"] for r in trace["requests"]]
            assert backend.token_counting["profile"] == profile
    # Same first request (no results yet); every later one carries the results framed the C# client's way.
    assert totals["python"][0] == totals["csharp-raw-element"][0]
    assert all(c > p for p, c in zip(totals["python"][1:], totals["csharp-raw-element"][1:]))


def test_the_assessment_answers_records_whose_ids_are_lists_or_objects_as_it_answers_strings():
    from wismo.runs.agent.assessment import assess
    from wismo.runs.agent.evidence import Evidence

    evidence = Evidence()
    evidence.orders.append({"orderId": "ORD-1", "items": [{"sku": "A"}, {"sku": ["B"]}]})
    evidence.reservations.extend([{"sku": ["A"], "status": "backordered"}, {"sku": ["B"], "status": "backordered"}])
    evidence.tracking.append({"trackingId": ["T1"], "sku": "A", "availability": "unavailable"})
    evidence.unreadable += [["T1"], "T2", "T2"]  # as a hostile server's records could make them, through add()
    answer = assess(evidence)
    # A list where a string belongs matches only an equal list, as a scan of the list matched it, and stops nothing.
    assert answer["outstandingSkus"] == ["A", ["B"]] and answer["delayReasons"] == ["stock_shortage"]
    assert answer["missingEvidence"] == [["T1"], "T2", "T2"]
    del evidence.reservations[1]
    assert assess(evidence)["delayReasons"] == []
