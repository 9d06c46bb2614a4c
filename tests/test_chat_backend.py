"""The openai-chat backend and OpenAI-compatible servers: the chat mapping, runs recorded against a local server in
both API shapes, and every way a local server misbehaves ending one conversation with a named outcome."""

import json

import pytest

from article import converse
from chatserver import CHAT, MODEL, RESPONSES, ChatServer, Turn, order_in, tool_outputs
from inmemory import served
from replay import Answer
from wismo import runs
from wismo.runs import recording, store, summaries
from wismo.runs.agent import outcomes
from wismo.runs.agent.backends import make
from wismo.runs.agent.base import BackendError
from wismo.runs.agent.checks import refused_call
from wismo.runs.agent.openai_backend import OpenAIBackend
from wismo.runs.agent.openai_chat_backend import OpenAIChatBackend, from_message, to_messages, to_tools
from wismo.studies.declaration import article as article_study

ARTICLE = article_study()  # the study every run here records

pytestmark = pytest.mark.anyio
SECRET = "sk-local-NEVER-WRITE-ME-7373"
ASKED = "qwen2.5:7b"  # the id the user gives; the server answers with its own (MODEL)
BACKENDS = {"openai": OpenAIBackend, "openai-chat": OpenAIChatBackend}
# Long enough that an answer on time is on time on a loaded machine (the suite runs on 2 cores, 3 workers); the
# timeout case is held four times as long.
TIMEOUT_S = 2.0
ANSWER = {
    "deliveredSkus": [],
    "outstandingSkus": [],
    "delayReasons": [],
    "deliveryEstimate": None,
    "missingEvidence": [],
    "customerSummary": "Looked it up.",
}


def answer_text(outputs):
    """A contract answer that also shows what the model saw (so a test can check the results reached it)."""
    return json.dumps({**ANSWER, "customerSummary": f"Read {len(outputs)} result(s)."})


def test_history_maps_to_chat_messages_and_parallel_calls_share_one_assistant_message():
    items = [
        {"type": "message", "role": "user", "content": "q"},
        {"type": "message", "role": "assistant", "content": "Looking."},
        {"type": "function_call", "name": "a", "arguments": "{}", "call_id": "1"},
        {"type": "function_call", "name": "b", "arguments": '{"x":1}', "call_id": "2"},
        {"type": "function_call_output", "call_id": "1", "output": "A"},
        {"type": "function_call_output", "call_id": "2", "output": "B"},
        {"type": "function_call", "name": "a", "arguments": "{}", "call_id": "3"},
        {"type": "function_call_output", "call_id": "3", "output": "C"},
    ]
    messages = to_messages("be brief", items)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "assistant", "tool"]
    assert messages[2]["content"] == "Looking." and [c["id"] for c in messages[2]["tool_calls"]] == ["1", "2"]
    assert messages[2]["tool_calls"][1] == {
        "id": "2",
        "type": "function",
        "function": {"name": "b", "arguments": '{"x":1}'},
    }
    assert messages[5] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "3", "type": "function", "function": {"name": "a", "arguments": "{}"}}],
    }
    assert [(m["tool_call_id"], m["content"]) for m in messages if m["role"] == "tool"] == [
        ("1", "A"),
        ("2", "B"),
        ("3", "C"),
    ]
    tools = to_tools(
        [{"type": "function", "name": "a", "description": "d", "parameters": {"type": "object"}, "strict": False}]
    )
    assert tools == [
        {"type": "function", "function": {"name": "a", "description": "d", "parameters": {"type": "object"}}}
    ]


def test_a_chat_answer_maps_back_to_items_text_first():
    from openai.types.chat import ChatCompletionMessage

    message = ChatCompletionMessage.model_validate(
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "get_order", "arguments": '{"orderId":"ORD-1"}'}}
            ],
        }
    )
    assert from_message(message) == [
        {"type": "message", "role": "assistant", "content": "Checking."},
        {"type": "function_call", "name": "get_order", "arguments": '{"orderId":"ORD-1"}', "call_id": "c1"},
    ]


def investigator(granular: bool):
    """A model that reads the order, then (granular) every linked record in one turn of parallel calls, then answers."""

    def step(path, body):
        outputs = tool_outputs(path, body)
        if not outputs:
            return Turn(
                calls=[
                    (
                        "get_order" if granular else "get_order_support_context",
                        {"orderId": order_in(path, body)},
                        "call_a",
                    )
                ],
                usage=(500, 20, None),
            )
        if granular and len(outputs) == 1:
            order = json.loads(outputs[0])
            linked = (
                [("get_payment", {"paymentId": order["paymentId"]})]
                + [("get_reservation", {"reservationId": r}) for r in order["reservationIds"]]
                + [("get_tracking", {"trackingId": t}) for t in order["trackingIds"]]
            )
            return Turn(
                text="Following the links.",
                calls=[(n, a, f"call_b{i}") for i, (n, a) in enumerate(linked)],
                usage=(700, 40, 512),
            )
        return Turn(text=answer_text(outputs), usage=(900 + 100 * len(outputs), 60, 512))

    return step


@pytest.mark.parametrize("shape", ["openai-chat", "openai"])
async def test_a_granular_conversation_with_parallel_calls_in_either_api_shape(shape):
    with ChatServer(investigator(granular=True)) as server:
        backend = BACKENDS[shape](ASKED, base_url=server.url + "/v1", max_retries=0)
        async with served("granular") as conn:
            trace = await converse(backend, conn, await conn.list_tools(), "ORD-1004")
    assert {r["path"] for r in server.requests} == {CHAT if shape == "openai-chat" else RESPONSES}
    first, second, third = (r["body"] for r in server.requests)  # the strict server accepted all three
    assert first["model"] == ASKED and first["parallel_tool_calls"] is True
    if shape == "openai-chat":
        assert first["messages"][0]["role"] == "system" and first["messages"][0]["content"].startswith(
            "You are a support assistant"
        )
        assert [t["function"]["name"] for t in first["tools"]] == [
            "get_order",
            "get_payment",
            "get_reservation",
            "get_tracking",
        ]
        assert [m["role"] for m in third["messages"]] == ["system", "user", "assistant", "tool", "assistant"] + [
            "tool"
        ] * 4
        assert (
            third["messages"][4]["content"] == "Following the links." and len(third["messages"][4]["tool_calls"]) == 4
        )
    assert trace["outcome"] == "answered" and trace["answer"]["customerSummary"] == "Read 5 result(s)."
    assert [len([o for o in r["output"] if o["type"] == "function_call"]) for r in trace["requests"]] == [1, 4, 0]
    assert [r["usage"] for r in trace["requests"]] == [
        {"inputTokens": 500, "outputTokens": 20, "cachedInputTokens": 0},
        {"inputTokens": 700, "outputTokens": 40, "cachedInputTokens": 512},
        {"inputTokens": 1400, "outputTokens": 60, "cachedInputTokens": 512},
    ]
    assert backend.token_label == "server-reported" and backend.server["reportedModels"] == [MODEL]
    assert runs.verify_trace(trace, "t", ["get_order", "get_payment", "get_reservation", "get_tracking"]) == []


async def test_a_recorded_run_is_server_reported_names_the_server_and_holds_no_key(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with ChatServer(investigator(granular=False), key=SECRET) as server:  # a vLLM started with --api-key
        backend = make("openai-chat", ASKED, server.url + "/v1")
        folders = await recording.evaluate(
            ["granular", "focused"], 1, backend, ["ORD-1004", "ORD-1005"], study=ARTICLE, runs_dir=tmp_path
        )
    assert [f.name.rsplit("-", 1)[0] for f in folders] == ["openai-chat-granular", "openai-chat-focused"]
    assert all(r["headers"]["authorization"] == f"Bearer {SECRET}" for r in server.requests)
    for folder in folders:
        assert runs.verify(folder) == []
        manifest = json.loads((folder / "manifest.json").read_text())
        assert manifest["backend"] == "openai-chat" and manifest["model"] == ASKED
        assert manifest["figures"]["tokens"] == "server-reported"
        assert manifest["server"] == {
            "host": "127.0.0.1",
            "port": server.port,
            "reportedModels": [MODEL],
            "requestTimeoutS": 120.0,
            "maxRetries": 2,
        }
    assert sorted(summaries.selected_runs(None, tmp_path)) == sorted(folders)
    files = [f for f in tmp_path.rglob("*") if f.is_file()]
    assert len(files) == 2 * 3 and not any(SECRET in f.read_text() for f in files)


def misbehaving_server():
    """Ten conversations: one answered, then each way a local server or small model goes wrong, in order."""

    def ask(path, body, call_id="call_1"):
        return Turn(calls=[("get_order_support_context", {"orderId": order_in(path, body)}, call_id)])

    plans = [
        lambda p, b, n: ask(p, b) if n == 0 else Turn(text=answer_text(tool_outputs(p, b))),
        lambda p, b, n: Turn(text=json.dumps(ANSWER), usage=None),  # no usage
        lambda p, b, n: Turn(calls=[("get_order_support_context", "{orderId: ORD-1001", "call_1")]),  # not JSON
        lambda p, b, n: Turn(calls=[("drop_database", {}, "call_1")]),  # unknown tool
        lambda p, b, n: ask(p, b),  # call_1 twice
        lambda p, b, n: Turn(calls=[("get_order_support_context", {"orderId": "ORD-1"}, None)]),  # no call id
        lambda p, b, n: Turn(text="The laptop arrived; the monitor is on its way."),  # prose
        lambda p, b, n: ask(p, b) if n == 0 else Answer(200, {}, delay_s=TIMEOUT_S * 4),  # timeout
        lambda p, b, n: ask(p, b) if n == 0 else Answer(500, {"error": {"message": "CUDA out of memory"}}),
        lambda p, b, n: ask(p, b) if n == 0 else Answer(go_down=True),  # refused after
    ]
    state = {"conversation": -1, "turn": 0}

    def step(path, body):
        items = body["messages"] if path == CHAT else body["input"]
        if not any(i.get("role") == "assistant" or i.get("type") == "function_call" for i in items):
            state["conversation"], state["turn"] = state["conversation"] + 1, 0  # a fresh conversation
        else:
            state["turn"] += 1
        return plans[state["conversation"]](path, body, state["turn"])

    return ChatServer(step)


@pytest.mark.parametrize("shape", ["openai-chat", "openai"])
async def test_each_misbehaviour_ends_its_conversation_with_a_named_outcome_and_the_run_goes_on(tmp_path, shape):
    orders = ["ORD-1001", "ORD-1002", "ORD-1003", "ORD-1004", "ORD-1005"]
    with misbehaving_server() as server:
        backend = BACKENDS[shape](ASKED, base_url=server.url + "/v1", timeout_s=TIMEOUT_S, max_retries=0)
        (folder,) = await recording.evaluate(["focused"], 2, backend, orders, study=ARTICLE, runs_dir=tmp_path)
    run = runs.load(folder)  # refused unless it verifies
    by_case = {(t["orderId"], t["repetition"]): t for t in run.traces}
    traces = [by_case[(o, r)] for o in orders for r in (1, 2)]
    assert [t["outcome"] for t in traces] == [
        outcomes.ANSWERED,
        outcomes.NO_USAGE,
        outcomes.BAD_ARGUMENTS,
        outcomes.UNKNOWN_TOOL,
        outcomes.BAD_CALL_ID,
        outcomes.BAD_CALL_ID,
        outcomes.UNEXPECTED_ANSWER,
        outcomes.TIMEOUT,
        outcomes.SERVER_ERROR,
        outcomes.CONNECTION_FAILED,
    ]
    reasons = [t["reason"] for t in traces]
    assert reasons[0] is None and all(r.startswith("Request ") and r.endswith(".") for r in reasons[1:])
    assert "reported no token usage" in reasons[1] and "are not JSON: '{orderId: ORD-1001'" in reasons[2]
    assert "'drop_database', which is not one of the offered tools (get_order_support_context)" in reasons[3]
    assert (
        reasons[4]
        == "Request 2: the call id 'call_1' (of get_order_support_context) was already used in this conversation."
    )
    assert "came without a call id" in reasons[5] and "holds no JSON object" in reasons[6]
    assert (
        reasons[7] == f"Request 2: the server gave no answer within {TIMEOUT_S:g} s."
        and "HTTP 500: CUDA out of memory" in reasons[8]
    )
    assert "could not be reached" in reasons[9]
    # The tool result that was ready when the request failed is kept, and its call's bytes verify against it.
    assert [i["type"] for i in traces[7]["unsentItems"]] == ["function_call_output"] and traces[7]["totals"][
        "toolCalls"
    ] == 1
    assert traces[6]["answerText"].startswith("The laptop arrived") and traces[6]["answer"] is None
    # verify checks each outcome against its transcript, and the schema wants a reason for every failure.
    names = [t["name"] for t in run.manifest["tools"]]
    relabelled = {**traces[3], "outcome": outcomes.BAD_ARGUMENTS}
    assert runs.verify_trace(relabelled, "t", names) == [
        "t: the outcome is 'tool-call arguments not a JSON object' but the last reply's calls give 'unknown tool "
        "requested'"
    ]
    assert runs.verify_trace({**traces[6], "outcome": outcomes.ANSWERED}, "t", names) == [
        "t: the outcome is 'answered' but the final text fails the contract: the model's final reply holds no JSON "
        "object: "
        "'The laptop arrived; the monitor is on its way.'"
    ]
    assert store._schema_errors("trace", {k: v for k, v in traces[1].items() if k != "reason"}, "t") == [
        "t: <root>: 'reason' is a required property"
    ]
    counted = summaries.outcomes(summaries.case_rows([run]))
    assert counted[0] == {"design": "focused", "outcome": outcomes.BAD_CALL_ID, "count": 2}
    assert len(counted) == 9 and sum(r["count"] for r in counted) == 10
    assert (
        run.manifest["server"]["reportedModels"] == [MODEL] and run.manifest["figures"]["tokens"] == "server-reported"
    )


async def test_a_server_that_wants_a_key_is_named_with_the_variable_to_set(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    items = [{"type": "message", "role": "user", "content": "q"}]
    with ChatServer([], key="right") as server:
        backend = make("openai-chat", ASKED, server.url + "/v1")
        with pytest.raises(
            BackendError,
            match=r"the server at 127\.0\.0\.1:\d+ wants an API key \(HTTP 401\); "
            r"set OPENAI_API_KEY to a key it accepts",
        ):
            await backend.respond("i", [], items)
        assert server.requests[0]["headers"]["authorization"] == "Bearer no-key-needed"
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        with pytest.raises(BackendError, match="refused the key in OPENAI_API_KEY") as err:
            await make("openai", ASKED, server.url + "/v1").respond("i", [], items)
    assert SECRET not in str(err.value)


async def test_a_backend_failing_mid_run_leaves_nothing(tmp_path):
    def step(path, body):
        return (
            investigator(False)(path, body)
            if len(server.requests) <= 2
            else Answer(403, {"error": {"message": "forbidden"}})
        )

    with ChatServer(step) as server:
        backend = OpenAIChatBackend(ASKED, base_url=server.url + "/v1", max_retries=0)
        with pytest.raises(BackendError, match="wants an API key"):
            await recording.evaluate(["focused"], 2, backend, ["ORD-1001"], study=ARTICLE, runs_dir=tmp_path)
    assert len(server.requests) == 3 and list(tmp_path.iterdir()) == []


async def test_no_server_at_the_address_stops_the_run_before_anything_is_kept(tmp_path):
    with ChatServer([]) as gone:
        url = gone.url
    backend = OpenAIChatBackend(ASKED, base_url=url + "/v1", max_retries=0)
    with pytest.raises(
        BackendError,
        match=r"cannot reach a server at 127\.0\.0\.1:\d+ \(connection refused\); start it, or correct --base-url",
    ):
        await recording.evaluate(["focused"], 1, backend, ["ORD-1001"], study=ARTICLE, runs_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_keys_labels_and_model_ids(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(BackendError, match="openai-chat backend: OPENAI_API_KEY is not set"):
        make("openai-chat")  # OpenAI's own API
    with pytest.raises(BackendError, match="give the model id the server at http://127.0.0.1:11434/v1 serves"):
        make("openai-chat", None, "http://127.0.0.1:11434/v1")
    local = make("openai-chat", ASKED, "http://user:pw@127.0.0.1:11434/v1?token=t")
    assert local.token_label == "server-reported" and local.server == {
        "host": "127.0.0.1",
        "port": 11434,
        "reportedModels": [],
        "requestTimeoutS": 120.0,
        "maxRetries": 2,
    }
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    assert make("openai", None, "https://api.openai.com/v1").token_label == "provider-reported"
    assert (
        make("openai-chat").server["host"] == "api.openai.com"
        and make("openai-chat").token_label == "provider-reported"
    )
    assert make("openai", "m", "http://vllm.internal:8000/v1").token_label == "server-reported"


def test_refused_calls_name_the_first_problem():
    def call(name="get_order", arguments="{}", call_id="a"):
        return {"type": "function_call", "name": name, "arguments": arguments, "call_id": call_id}

    names = ["get_order"]
    assert refused_call([call(), call(call_id="b", arguments="")], [], names) is None  # "" is a call without arguments
    assert refused_call([call(), call()], [], names)[0] == outcomes.BAD_CALL_ID  # twice in one reply
    assert refused_call([call()], ["a"], names)[0] == outcomes.BAD_CALL_ID
    assert refused_call([call(arguments="[1]")], [], names) == (
        outcomes.BAD_ARGUMENTS,
        "the arguments of get_order (a) are JSON but not an object: '[1]'",
    )
    assert refused_call([call(name="x")], [], None) is None  # names unknown: not judged


def test_the_trace_schema_knows_every_outcome():
    schema = runs.schema("trace")
    assert sorted(schema["properties"]["outcome"]["enum"]) == sorted(outcomes.ALL)
    assert set(schema["if"]["properties"]["outcome"]["enum"]) == set(outcomes.ALL) - {
        outcomes.ANSWERED,
        *outcomes.BUDGETS,
    }


async def test_a_server_run_appears_in_the_recorded_runs_report_beside_not_mixed_with_scripted_runs(tmp_path):
    import shutil

    from wismo.reports import recorded_runs

    runs_dir = tmp_path / "runs"
    for folder in runs.find():  # the shipped scripted runs (the imported traces' runs are another group)
        if not folder.name.startswith("scripted-"):
            continue
        shutil.copytree(folder, runs_dir / folder.name)
    with ChatServer(investigator(granular=True)) as server:
        await recording.evaluate(
            ["granular"],
            1,
            make("openai-chat", ASKED, server.url + "/v1"),
            ["ORD-1004"],
            study=ARTICLE,
            runs_dir=runs_dir,
        )
    with ChatServer(investigator(granular=False)) as server:
        await recording.evaluate(
            ["focused"],
            1,
            make("openai-chat", ASKED, server.url + "/v1"),
            ["ORD-1004"],
            study=ARTICLE,
            runs_dir=runs_dir,
        )
    result = recorded_runs.build({"runs_dir": str(runs_dir), "output_dir": str(tmp_path / "out")})
    from_server, scripted = result["groups"]  # a model's runs lead, the stand-in's follow
    assert (scripted["backend"], from_server["backend"], from_server["model"]) == ("scripted", "openai-chat", ASKED)
    assert from_server["liveModel"] and not scripted["liveModel"] and result["title"].startswith("Recorded runs")
    assert from_server["kinds"]["tokens"] == "server-reported" and from_server["server"]["reportedModels"] == [MODEL]
    assert (
        scripted["kinds"]["runs"] == "scripted (no model)"
        and len(scripted["cases"]) == 36
        and len(from_server["cases"]) == 2
    )
    assert {o["outcome"] for o in from_server["outcomes"]} == {"answered"}
    assert (
        "model replied" in from_server["transcripts"]["granular"][0]
        and "scripted reply" in scripted["transcripts"]["granular"][0]
    )
