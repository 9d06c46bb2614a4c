"""The live backends' request and response handling, against a local server replaying provider payloads."""

import json

import pytest

from article import converse
from inmemory import served
from replay import ReplayServer
from wismo import runs
from wismo.runs import recording
from wismo.runs.agent.anthropic_backend import AnthropicBackend, to_messages
from wismo.runs.agent.backends import make
from wismo.runs.agent.base import BackendError
from wismo.runs.agent.openai_backend import OpenAIBackend
from wismo.studies.declaration import article as article_study

ARTICLE = article_study()  # the study every run here records

pytestmark = pytest.mark.anyio
SECRET = "sk-test-NEVER-WRITE-ME-4242"
ANSWER = {
    "deliveredSkus": ["LAPTOP-14"],
    "outstandingSkus": ["MONITOR-27"],
    "delayReasons": ["stock_shortage"],
    "deliveryEstimate": None,
    "missingEvidence": [],
    "customerSummary": "The laptop arrived; the monitor is backordered.",
}


def openai_replies():
    call = {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "model": "gpt-4.1-mini-2025-04-14",
        "output": [
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_Xy1",
                "name": "get_order_support_context",
                "arguments": '{"orderId":"ORD-1004"}',
                "status": "completed",
            }
        ],
        "usage": {
            "input_tokens": 577,
            "output_tokens": 21,
            "total_tokens": 598,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }
    text = {
        "id": "resp_2",
        "object": "response",
        "status": "completed",
        "model": "gpt-4.1-mini-2025-04-14",
        "output": [
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": json.dumps(ANSWER), "annotations": []}],
            }
        ],
        "usage": {
            "input_tokens": 1400,
            "output_tokens": 150,
            "total_tokens": 1550,
            "input_tokens_details": {"cached_tokens": 512},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }
    return [call, text]


async def test_openai_backend_in_the_loop():
    with ReplayServer({"/v1/responses": openai_replies()}) as server:
        backend = OpenAIBackend(api_key=SECRET, base_url=server.url + "/v1")
        async with served("focused") as conn:
            trace = await converse(backend, conn, await conn.list_tools(), "ORD-1004")
    first, second = (r["body"] for r in server.requests)
    assert first["model"] == "gpt-4.1-mini-2025-04-14" and first["parallel_tool_calls"] is True
    assert first["tools"] == [
        {
            "type": "function",
            "name": "get_order_support_context",
            "description": first["tools"][0]["description"],
            "parameters": {
                "type": "object",
                "properties": {"orderId": {"description": "The order ID, for example ORD-1001.", "type": "string"}},
                "required": ["orderId"],
            },
            "strict": False,
        }
    ]
    assert [i.get("type", "message") for i in first["input"]] == ["message"]
    # The second request resends the question and carries the call and its real MCP result.
    assert [i.get("type") for i in second["input"]] == ["message", "function_call", "function_call_output"]
    assert json.loads(second["input"][2]["output"])["order"]["orderId"] == "ORD-1004"
    assert server.requests[0]["headers"]["authorization"] == f"Bearer {SECRET}"
    assert trace["outcome"] == "answered" and trace["answer"] == ANSWER
    assert [r["usage"] for r in trace["requests"]] == [
        {"inputTokens": 577, "outputTokens": 21, "cachedInputTokens": 0},
        {"inputTokens": 1400, "outputTokens": 150, "cachedInputTokens": 512},
    ]


@pytest.mark.slow
async def test_anthropic_backend_in_the_loop():
    replies = [
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_order", "input": {"orderId": "ORD-1004"}}],
            "usage": {
                "input_tokens": 700,
                "output_tokens": 40,
                "cache_read_input_tokens": 100,
                "cache_creation_input_tokens": 0,
            },
        },
        {
            "id": "msg_2",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "content": [{"type": "text", "text": json.dumps(ANSWER)}],
            "usage": {"input_tokens": 900, "output_tokens": 120},
        },
    ]
    with ReplayServer({"/v1/messages": replies}) as server:
        backend = AnthropicBackend("claude-test", api_key=SECRET, base_url=server.url)
        async with served("granular") as conn:
            trace = await converse(backend, conn, await conn.list_tools(), "ORD-1004")
    first, second = (r["body"] for r in server.requests)
    assert first["system"].startswith("You are a support assistant")
    assert [t["name"] for t in first["tools"]] == ["get_order", "get_payment", "get_reservation", "get_tracking"]
    assert first["tools"][0]["input_schema"]["required"] == ["orderId"]
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
    assert second["messages"][1]["content"][0] == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "get_order",
        "input": {"orderId": "ORD-1004"},
    }
    assert second["messages"][2]["content"][0]["type"] == "tool_result"
    headers = server.requests[0]["headers"]
    assert SECRET in (headers.get("x-api-key"), headers.get("authorization", "").removeprefix("Bearer "))
    assert trace["requests"][0]["usage"] == {"inputTokens": 800, "outputTokens": 40, "cachedInputTokens": 100}
    assert trace["answer"] == ANSWER


def test_parallel_calls_group_into_one_assistant_turn():
    items = [
        {"type": "message", "role": "user", "content": "q"},
        {"type": "function_call", "name": "a", "arguments": "{}", "call_id": "1"},
        {"type": "function_call", "name": "b", "arguments": '{"x":1}', "call_id": "2"},
        {"type": "function_call_output", "call_id": "1", "output": "A"},
        {"type": "function_call_output", "call_id": "2", "output": "B"},
    ]
    messages = to_messages(items)
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert [b["id"] for b in messages[1]["content"]] == ["1", "2"] and messages[1]["content"][1]["input"] == {"x": 1}
    assert [b["tool_use_id"] for b in messages[2]["content"]] == ["1", "2"]


def test_live_backends_need_a_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(BackendError, match="OPENAI_API_KEY is not set; live runs need a key"):
        make("openai")
    with pytest.raises(BackendError, match="give a model id"):
        make("anthropic")
    with pytest.raises(BackendError, match="unknown backend 'gemini'"):
        make("gemini")


async def test_a_provider_error_is_named_without_the_key():
    with ReplayServer({}) as server:  # every request gets a 404
        backend = OpenAIBackend(api_key=SECRET, base_url=server.url + "/v1")
        with pytest.raises(BackendError) as err:
            await backend.respond("i", [], [{"type": "message", "role": "user", "content": "q"}])
    assert "openai backend: the server at 127.0.0.1:" in str(err.value) and "answered HTTP 404" in str(err.value)
    assert SECRET not in str(err.value)


async def test_a_recorded_live_run_contains_no_key(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with ReplayServer({"/v1/responses": openai_replies()}) as server:
        backend = make("openai", "gpt-4.1-mini-2025-04-14", server.url + "/v1")
        (folder,) = await recording.evaluate(["focused"], 1, backend, ["ORD-1004"], study=ARTICLE, runs_dir=tmp_path)
    assert runs.verify(folder) == []
    manifest = json.loads((folder / "manifest.json").read_text())
    # A replay server is not OpenAI's own API: its figures are server-reported, with the model id it answered with.
    assert manifest["figures"]["tokens"] == "server-reported" and manifest["backend"] == "openai"
    assert manifest["server"]["reportedModels"] == ["gpt-4.1-mini-2025-04-14"]
    for file in tmp_path.rglob("*"):
        if file.is_file():
            assert SECRET not in file.read_text(), file
