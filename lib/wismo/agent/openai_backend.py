"""The OpenAI Responses API through the official `openai` package; tokens as the provider reports them."""

from __future__ import annotations

import os
from typing import Any

from .base import BackendError, Reply, Usage, assistant_message
from .base import api_key as base_api_key

DEFAULT_MODEL = "gpt-4.1-mini-2025-04-14"  # the snapshot of the article's recorded run


class OpenAIBackend:
    """One Responses API request per model turn; our items are already in its input shape."""

    name = "openai"
    token_label = "provider-reported"

    def __init__(self, model: str = DEFAULT_MODEL, api_key: str | None = None, base_url: str | None = None, timeout_s: float = 120.0) -> None:
        from openai import AsyncOpenAI

        key = base_api_key("openai", api_key, "OPENAI_API_KEY")
        self.model = model
        self.client = AsyncOpenAI(api_key=key, base_url=base_url or os.environ.get("OPENAI_BASE_URL"), timeout=timeout_s, max_retries=2)

    async def respond(self, instructions: str, functions: list[dict[str, Any]], items: list[dict[str, Any]]) -> Reply:
        """Send instructions, tools and the whole history; map the response back to our items."""
        from openai import OpenAIError

        try:
            response = await self.client.responses.create(
                model=self.model, instructions=instructions, input=items, tools=functions,
                parallel_tool_calls=True, store=False,
            )
        except OpenAIError as exc:
            raise BackendError(f"openai backend: the request failed: {type(exc).__name__}: {exc}") from None
        output = []
        for item in response.output:
            if item.type == "function_call":
                output.append({"type": "function_call", "name": item.name, "arguments": item.arguments, "call_id": item.call_id})
            elif item.type == "message":
                text = "".join(part.text for part in item.content if getattr(part, "type", "") == "output_text")
                output.append(assistant_message(text))
        usage = response.usage
        cached = getattr(getattr(usage, "input_tokens_details", None), "cached_tokens", 0) or 0
        return Reply(output, Usage(usage.input_tokens, usage.output_tokens, cached))
