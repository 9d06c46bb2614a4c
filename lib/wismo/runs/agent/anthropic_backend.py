"""The Anthropic Messages API through the official `anthropic` package; tokens as the provider reports them."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, cast

from wismo.runs.agent.base import BackendError, Reply, Usage, assistant_message
from wismo.runs.agent.base import api_key as base_api_key

if TYPE_CHECKING:  # the SDK is imported when a backend is made, not with this module
    from anthropic.types import MessageParam, ToolParam

MAX_OUTPUT_TOKENS = 1024


def to_messages(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Our Responses-shaped history as Messages API turns: calls become tool_use, outputs tool_result."""
    messages: list[dict[str, Any]] = []

    def put(role: str, block: dict[str, Any]) -> None:
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].append(block)
        else:
            messages.append({"role": role, "content": [block]})

    for item in items:
        kind = item.get("type", "message")
        if kind == "message":
            put(item["role"], {"type": "text", "text": item["content"]})
        elif kind == "function_call":
            put(
                "assistant",
                {
                    "type": "tool_use",
                    "id": item["call_id"],
                    "name": item["name"],
                    "input": json.loads(item["arguments"] or "{}"),
                },
            )
        elif kind == "function_call_output":
            put("user", {"type": "tool_result", "tool_use_id": item["call_id"], "content": item["output"]})
    return messages


def to_tools(functions: list[dict[str, Any]]) -> list[ToolParam]:
    """Function definitions as Messages API tools (same name, description and schema)."""
    return [{"name": f["name"], "description": f["description"], "input_schema": f["parameters"]} for f in functions]


class AnthropicBackend:
    """One Messages API request per model turn."""

    name = "anthropic"
    token_label = "provider-reported"

    def __init__(
        self, model: str, api_key: str | None = None, base_url: str | None = None, timeout_s: float = 120.0
    ) -> None:
        from anthropic import AsyncAnthropic

        key = base_api_key("anthropic", api_key, "ANTHROPIC_API_KEY")
        self.model = model
        self.client = AsyncAnthropic(
            api_key=key, base_url=base_url or os.environ.get("ANTHROPIC_BASE_URL"), timeout=timeout_s, max_retries=2
        )

    async def respond(
        self, instructions: str, functions: list[dict[str, object]], items: list[dict[str, object]]
    ) -> Reply:
        """Send system, tools and the whole history; map content blocks back to our items."""
        from anthropic import AnthropicError

        try:
            response = await self.client.messages.create(
                model=self.model,
                system=instructions,
                tools=to_tools(functions),
                # Built as the Messages API's JSON: each dict one of the SDK's MessageParam shapes.
                messages=cast("list[MessageParam]", to_messages(items)),
                max_tokens=MAX_OUTPUT_TOKENS,
            )
        except AnthropicError as exc:
            raise BackendError(f"anthropic backend: the request failed: {type(exc).__name__}: {exc}") from None
        output: list[dict[str, object]] = []
        for block in response.content:
            if block.type == "tool_use":
                output.append(
                    {
                        "type": "function_call",
                        "name": block.name,
                        "arguments": json.dumps(block.input, separators=(",", ":")),
                        "call_id": block.id,
                    }
                )
            elif block.type == "text":
                output.append(assistant_message(block.text))
        u = response.usage
        cache_read = getattr(u, "cache_read_input_tokens", 0) or 0
        cache_write = getattr(u, "cache_creation_input_tokens", 0) or 0
        # Anthropic's input_tokens excludes cached reads and writes; we record all input, cached reads apart.
        return Reply(output, Usage(u.input_tokens + cache_read + cache_write, u.output_tokens, cache_read))
