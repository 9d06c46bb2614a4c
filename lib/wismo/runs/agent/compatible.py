"""An OpenAI or OpenAI-compatible endpoint: its client, its key rule, how its tokens are labelled, and what its
failures mean for a run (a set-up problem stops it; a later failure ends one conversation with a named outcome)."""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from wismo.runs.agent.base import BackendError, Usage
from wismo.runs.agent.outcomes import CONNECTION_FAILED, NO_USAGE, SERVER_ERROR, TIMEOUT, ConversationEnded

OPENAI_HOST = "api.openai.com"
DEFAULT_MODEL = "gpt-4.1-mini-2025-04-14"  # the snapshot of the article's recorded run
KEY_VARIABLE = "OPENAI_API_KEY"
# Local servers ignore the key, but the SDK refuses to start without one.
PLACEHOLDER_KEY = "no-key-needed"


def call_item(name: object, arguments: object, call_id: object) -> dict[str, object]:
    """A function_call item from a server's tool call as sent: arguments as text (an object, which some servers send,
    becomes compact JSON), a missing id or name as "" (the loop then ends the conversation, naming it)."""
    if arguments is None or isinstance(arguments, str):
        text = arguments or ""
    else:
        text = json.dumps(arguments, separators=(",", ":"))
    return {"type": "function_call", "name": name or "", "arguments": text, "call_id": call_id or ""}


def where(base_url: str | None) -> tuple[str, int]:
    """The host and port a base URL names (OpenAI's own API when None); never its path, user or query."""
    parts = urlsplit(base_url or f"https://{OPENAI_HOST}/v1")
    default = 443 if parts.scheme == "https" else 80
    return parts.hostname or "", parts.port or default


def _cause(exc: BaseException) -> str:
    """What lies under the SDK's "Connection error.": connection refused, or the transport's own words."""
    chain: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and len(chain) < 10:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    if any(isinstance(e, ConnectionRefusedError) for e in chain):
        return "connection refused"
    words = [str(e) for e in chain[1:] if str(e)]
    return words[0] if words else type(chain[-1]).__name__


class Endpoint:
    """One backend's server: the SDK client, the model ids its answers reported, and whether it has answered yet."""

    def __init__(
        self, backend: str, base_url: str | None, api_key: str | None, timeout_s: float, max_retries: int
    ) -> None:
        from openai import AsyncOpenAI

        self.backend = backend
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        self.host, self.port = where(self.base_url)
        self.official = self.host == OPENAI_HOST
        given = api_key or os.environ.get(KEY_VARIABLE)
        if not given and self.official:
            raise BackendError(
                f"{backend} backend: {KEY_VARIABLE} is not set; live runs need a key (the scripted backend needs none)"
            )
        self.key_sent = bool(given)
        self._key = given or PLACEHOLDER_KEY
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.client = AsyncOpenAI(api_key=self._key, base_url=self.base_url, timeout=timeout_s, max_retries=max_retries)
        self.reported_models: set[str] = set()
        self.answered = False

    @property
    def token_label(self) -> str:
        """provider-reported for OpenAI's own API; server-reported for any other server."""
        return "provider-reported" if self.official else "server-reported"

    def record(self) -> dict[str, object]:
        """The manifest's server block: host, port, the model ids the answers named, the timeout; never a key."""
        return {
            "host": self.host,
            "port": self.port,
            "reportedModels": sorted(self.reported_models),
            "requestTimeoutS": self.timeout_s,
            "maxRetries": self.max_retries,
        }

    def _tries(self) -> str:
        """How often the SDK tried, when it retried (its retries multiply the wait a reason names)."""
        return f", {self.max_retries + 1} times" if self.max_retries else ""

    def _scrub(self, text: str) -> str:
        """A server's message with the key taken out, should a server echo it."""
        return text.replace(self._key, "<key>") if self.key_sent else text

    async def send(self, create: Callable[..., Awaitable[object]], **request: object) -> Any:
        """One request: the response, a BackendError that stops the run, or ConversationEnded with a named outcome."""
        from openai import APIConnectionError, APIStatusError, APITimeoutError, OpenAIError

        at = f"{self.host}:{self.port}"
        try:
            response = await create(**request)
        except APIStatusError as exc:
            if exc.status_code in (401, 403):
                wants = f"refused the key in {KEY_VARIABLE}" if self.key_sent else "wants an API key"
                raise BackendError(
                    f"{self.backend} backend: the server at {at} {wants} (HTTP {exc.status_code}); "
                    f"set {KEY_VARIABLE} to a key it accepts"
                ) from None
            body = exc.body if isinstance(exc.body, dict) else {}
            said = self._scrub(str(body.get("message") or exc.message)).rstrip(".")[:300]
            if not self.answered:
                raise BackendError(
                    f"{self.backend} backend: the server at {at} answered HTTP {exc.status_code} for model "
                    f"{request.get('model')!r}: {said}"
                ) from None
            raise ConversationEnded(SERVER_ERROR, f"the server answered HTTP {exc.status_code}: {said}") from None
        except APITimeoutError:
            if not self.answered:
                raise BackendError(
                    f"{self.backend} backend: the server at {at} did not answer the run's first request within "
                    f"{self.timeout_s:g} s; a local model may still be loading, so give it longer with --timeout"
                ) from None
            raise ConversationEnded(
                TIMEOUT, f"the server gave no answer within {self.timeout_s:g} s{self._tries()}"
            ) from None
        except APIConnectionError as exc:
            cause = self._scrub(_cause(exc))[:200]
            if not self.answered:
                raise BackendError(
                    f"{self.backend} backend: cannot reach a server at {at} ({cause}); start it, or correct --base-url"
                ) from None
            raise ConversationEnded(
                CONNECTION_FAILED, f"the server at {at} could not be reached ({cause}){self._tries()}"
            ) from None
        except OpenAIError as exc:  # an answer the SDK could not read, for one
            said = self._scrub(f"{type(exc).__name__}: {exc}")[:300]
            if not self.answered:
                raise BackendError(
                    f"{self.backend} backend: the server at {at} gave an answer the SDK cannot use ({said})"
                ) from None
            raise ConversationEnded(SERVER_ERROR, f"the server gave an answer the SDK cannot use ({said})") from None
        self.answered = True
        model = getattr(response, "model", None)
        if isinstance(model, str) and model:
            self.reported_models.add(model)
        return response

    def usage(self, response: object, inputs: str, outputs: str, details: str) -> Usage:
        """Tokens as the answer reports them (cached input from its details when given); ConversationEnded when it
        reports none, since a reply without its tokens cannot be recorded truthfully."""
        u = getattr(response, "usage", None)
        counts = [getattr(u, inputs, None), getattr(u, outputs, None)]
        if not (isinstance(counts[0], int) and isinstance(counts[1], int)):
            model = getattr(response, "model", None)
            raise ConversationEnded(
                NO_USAGE, f"the server's answer (model {model!r}) reported no token usage, so its reply is not recorded"
            )
        cached = getattr(getattr(u, details, None), "cached_tokens", None)
        return Usage(counts[0], counts[1], cached if isinstance(cached, int) else 0)


class EndpointBackend:
    """What both OpenAI backends share: a model id, an endpoint, and the label and server block derived from it."""

    name = "openai"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 2,
    ) -> None:
        self.model = model
        self.endpoint = Endpoint(self.name, base_url, api_key, timeout_s, max_retries)
        self.token_label = self.endpoint.token_label

    @property
    def server(self) -> dict[str, object]:
        """Where the requests went and which model ids answered (for the run's manifest)."""
        return self.endpoint.record()
