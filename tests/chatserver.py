"""A scripted OpenAI-compatible server on 127.0.0.1: it speaks both the Chat Completions and the Responses API,
checks each request as a strict server would (400 naming the problem), and answers as the test scripted it: a
model turn rendered in the request's API shape, an HTTP error, a delay, or going down mid-run."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from replay import Answer, LocalServer

CHAT, RESPONSES = "/v1/chat/completions", "/v1/responses"
MODEL = "qwen2.5:7b-instruct-q4_K_M"  # what the server says it ran (an Ollama-style model id)


@dataclass
class Turn:
    """One scripted model turn: text and/or tool calls (name, arguments as text or a dict, call id or None),
    and usage as (input, output, cached) or None for a server that reports none."""

    text: str | None = None
    calls: list[tuple[str, Any, str | None]] = field(default_factory=list)
    usage: tuple[int, int, int | None] | None = (100, 10, None)
    model: str = MODEL


Step = Turn | Answer
Script = Iterable[Step] | Callable[[str, dict[str, Any]], Step]


def _arguments(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def chat_body(turn: Turn) -> dict[str, Any]:
    """A turn as a chat.completion object."""
    calls = [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": _arguments(args)}}
        for name, args, cid in turn.calls
    ]
    message = {"role": "assistant", "content": turn.text, **({"tool_calls": calls} if calls else {})}
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": turn.model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
    }
    if turn.usage is not None:
        prompt, completion, cached = turn.usage
        body["usage"] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            **({"prompt_tokens_details": {"cached_tokens": cached}} if cached is not None else {}),
        }
    return body


def responses_body(turn: Turn) -> dict[str, Any]:
    """A turn as a Responses API response object."""
    output: list[dict[str, Any]] = []
    if turn.text is not None:
        output.append(
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": turn.text, "annotations": []}],
            }
        )
    output += [
        {
            "type": "function_call",
            "id": f"fc_{i}",
            "call_id": cid,
            "name": name,
            "arguments": _arguments(args),
            "status": "completed",
        }
        for i, (name, args, cid) in enumerate(turn.calls)
    ]
    body = {"id": "resp_1", "object": "response", "status": "completed", "model": turn.model, "output": output}
    if turn.usage is not None:
        prompt, completion, cached = turn.usage
        body["usage"] = {
            "input_tokens": prompt,
            "output_tokens": completion,
            "total_tokens": prompt + completion,
            "input_tokens_details": {"cached_tokens": cached or 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        }
    return body


def _error(status: int, message: str) -> Answer:
    return Answer(status, {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}})


def chat_problem(body: dict[str, Any]) -> str | None:
    """What a strict server refuses in a chat request: every tool message must answer a call of the assistant
    message before it, and every call must be answered before the conversation goes on."""
    open_calls: set[str] = set()
    for i, message in enumerate(body.get("messages", [])):
        role = message.get("role")
        if role == "tool":
            if message.get("tool_call_id") not in open_calls:
                return f"messages[{i}]: tool message answers no open tool call ({message.get('tool_call_id')!r})"
            open_calls.discard(message["tool_call_id"])
            continue
        if open_calls:
            return f"messages[{i}]: tool calls {sorted(open_calls)} were not answered"
        if role == "assistant":
            open_calls = {c["id"] for c in message.get("tool_calls") or []}
        elif role not in ("system", "user"):
            return f"messages[{i}]: unknown role {role!r}"
    if any(t.get("type") != "function" or "name" not in t.get("function", {}) for t in body.get("tools", [])):
        return "tools: each tool must be {type: function, function: {name, ...}}"
    return None


def responses_problem(body: dict[str, Any]) -> str | None:
    """What a strict server refuses in a Responses request: an output for a call it never saw."""
    seen = set()
    for i, item in enumerate(body.get("input", [])):
        if item.get("type") == "function_call":
            seen.add(item["call_id"])
        elif item.get("type") == "function_call_output" and item["call_id"] not in seen:
            return f"input[{i}]: no tool call found for function call output with call_id {item['call_id']}"
    return None


class ChatServer(LocalServer):
    """Answers with the script's next step (a list, or a function of path and request body); with `key`, it
    answers 401 to any request without that bearer key."""

    def __init__(self, script: Script, key: str | None = None) -> None:
        super().__init__()
        self.script = script if callable(script) else iter(list(script))
        self.key = key

    def answer(self, path: str, body: Any, headers: dict[str, str]) -> Answer:
        """Authorise, check the request, then render the scripted step in the request's API shape."""
        if self.key is not None and headers.get("authorization") != f"Bearer {self.key}":
            return _error(401, "Invalid API key")
        if path not in (CHAT, RESPONSES):
            return _error(404, f"no route {path}")
        problem = chat_problem(body) if path == CHAT else responses_problem(body)
        if problem:
            return _error(400, problem)
        step = self.script(path, body) if callable(self.script) else next(self.script, None)
        if step is None:
            return _error(500, "the test's script has no step left")
        if isinstance(step, Answer):
            return step
        return Answer(200, chat_body(step) if path == CHAT else responses_body(step))


def question(path: str, body: dict[str, Any]) -> str:
    """The user's question in either API shape."""
    messages = body["messages"] if path == CHAT else body["input"]
    return next(m["content"] for m in messages if m.get("role") == "user")


def tool_outputs(path: str, body: dict[str, Any]) -> list[str]:
    """Every tool result sent so far, in either API shape."""
    if path == CHAT:
        return [m["content"] for m in body["messages"] if m.get("role") == "tool"]
    return [i["output"] for i in body["input"] if i.get("type") == "function_call_output"]


def order_in(path: str, body: dict[str, Any]) -> str:
    """The order the user asked about."""
    return re.search(r"ORD-[0-9]+", question(path, body)).group(0)
