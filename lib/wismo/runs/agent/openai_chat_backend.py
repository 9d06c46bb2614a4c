"""The Chat Completions API through the official `openai` package: what Ollama, vLLM, llama.cpp and most
OpenAI-compatible servers speak. Our history is Responses-shaped; it is mapped to chat messages and back."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wismo.runs.agent.base import Reply, assistant_message
from wismo.runs.agent.compatible import EndpointBackend, call_item

if TYPE_CHECKING:  # the SDK is imported when a backend is made, not with this module
    from openai.types.chat import ChatCompletionMessage


def to_messages(instructions: str, items: list[dict[str, object]]) -> list[dict[str, object]]:
    """Our history as chat messages: a reply's text and calls become one assistant message with tool_calls, and
    each function_call_output a tool message with its tool_call_id."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": instructions}]
    for item in items:
        kind = item.get("type", "message")
        if kind == "function_call":
            call = {
                "id": item["call_id"],
                "type": "function",
                "function": {"name": item["name"], "arguments": item["arguments"]},
            }
            last = messages[-1]
            if last["role"] == "assistant":  # the same reply: its text and earlier calls
                last.setdefault("tool_calls", []).append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            messages.append({"role": "tool", "tool_call_id": item["call_id"], "content": item["output"]})
        else:
            messages.append({"role": item["role"], "content": item["content"]})
    return messages


def to_tools(functions: list[dict[str, object]]) -> list[dict[str, object]]:
    """Responses-shaped function definitions as Chat Completions tools (same name, description and schema)."""
    return [
        {
            "type": "function",
            "function": {"name": f["name"], "description": f["description"], "parameters": f["parameters"]},
        }
        for f in functions
    ]


def from_message(message: ChatCompletionMessage | None) -> list[dict[str, object]]:
    """A chat answer's message as our output items: its text (if any) first, then each tool call."""
    output: list[dict[str, object]] = []
    if message is not None and message.content:
        output.append(assistant_message(message.content))
    for call in getattr(message, "tool_calls", None) or []:
        function = getattr(call, "function", None)
        output.append(
            call_item(getattr(function, "name", None), getattr(function, "arguments", None), getattr(call, "id", None))
        )
    return output


class OpenAIChatBackend(EndpointBackend):
    """One Chat Completions request per model turn, parallel tool calls allowed."""

    name = "openai-chat"

    async def respond(
        self, instructions: str, functions: list[dict[str, object]], items: list[dict[str, object]]
    ) -> Reply:
        """Send the system message, tools and the whole history; map the first choice back to our items."""
        response = await self.endpoint.send(
            self.endpoint.client.chat.completions.create,
            model=self.model,
            messages=to_messages(instructions, items),
            tools=to_tools(functions),
            parallel_tool_calls=True,
        )
        usage = self.endpoint.usage(response, "prompt_tokens", "completion_tokens", "prompt_tokens_details")
        choices = getattr(response, "choices", None) or []
        return Reply(from_message(choices[0].message if choices else None), usage)
