"""What every model backend returns: output items in the Responses API's shape, and token usage."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from wismo.core.errors import WismoError


class BackendError(WismoError, RuntimeError):
    """A backend cannot be used or failed; the message says which backend and why (never the key)."""


@dataclass(frozen=True)
class Usage:
    """Tokens of one model request: input (all of it, cached included), output, and the cached part of input."""

    input_tokens: int
    output_tokens: int
    cached_input_tokens: int = 0


@dataclass(frozen=True)
class Reply:
    """One model response: function_call items and/or one assistant message item."""

    output: list[dict[str, Any]]
    usage: Usage


class Backend(Protocol):
    """A model behind the loop: given instructions, tools and the whole history, it replies once.

    A backend that talks to a server may also have a `server` property (host, port, reported model ids) that the
    run's manifest records; a failure that should end only the current conversation raises
    outcomes.ConversationEnded, any other BackendError stops the run.
    """

    name: str
    model: str
    token_label: str

    async def respond(
        self, instructions: str, functions: list[dict[str, object]], items: list[dict[str, object]]
    ) -> Reply:
        """Send one request carrying everything so far and return the model's reply."""
        ...


def assistant_message(text: str) -> dict[str, object]:
    """An assistant message item holding the model's text."""
    return {"type": "message", "role": "assistant", "content": text}


def api_key(backend: str, given: str | None, variable: str) -> str:
    """The key for a live backend: as given, else from the environment; a clear error when there is none."""
    import os

    key = given or os.environ.get(variable)
    if not key:
        raise BackendError(
            f"{backend} backend: {variable} is not set; live runs need a key (the scripted backend needs none)"
        )
    return key
