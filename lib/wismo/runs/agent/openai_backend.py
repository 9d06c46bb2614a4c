"""The OpenAI Responses API through the official `openai` package, at OpenAI or any server that speaks it."""

from __future__ import annotations

from wismo.runs.agent.base import Reply, assistant_message
from wismo.runs.agent.compatible import DEFAULT_MODEL, EndpointBackend, call_item

__all__ = ["DEFAULT_MODEL", "OpenAIBackend"]


class OpenAIBackend(EndpointBackend):
    """One Responses API request per model turn; our items are already in its input shape."""

    name = "openai"

    async def respond(
        self, instructions: str, functions: list[dict[str, object]], items: list[dict[str, object]]
    ) -> Reply:
        """Send instructions, tools and the whole history; map the response back to our items."""
        response = await self.endpoint.send(
            self.endpoint.client.responses.create,
            model=self.model,
            instructions=instructions,
            input=items,
            tools=functions,
            parallel_tool_calls=True,
            store=False,
        )
        usage = self.endpoint.usage(response, "input_tokens", "output_tokens", "input_tokens_details")
        output = []
        for item in response.output or []:
            if item.type == "function_call":
                output.append(call_item(item.name, item.arguments, item.call_id))
            elif item.type == "message":
                text = "".join(part.text for part in item.content if getattr(part, "type", "") == "output_text")
                output.append(assistant_message(text))
        return Reply(output, usage)
