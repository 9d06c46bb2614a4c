"""Choose a model backend by name."""

from __future__ import annotations

import os

from wismo.runs.agent.base import Backend, BackendError


def conversing(backend: Backend, how: object, values: dict[str, object], contract: bool) -> Backend:
    """The backend for one conversation: a scripted one told the design's investigation and the case (what a model
    reads from the question), any live one as it is."""
    following = getattr(backend, "following", None)
    return following(how, values, contract) if following is not None else backend


BACKENDS = ("scripted", "openai", "openai-chat", "anthropic")
DEFAULT_TIMEOUT_S = 120.0  # seconds for one model request; a local model on a CPU may need more


def make(
    name: str,
    model: str | None = None,
    base_url: str | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    profile: str = "python",
) -> Backend:
    """A backend by name: scripted (no network); openai (Responses API) or openai-chat (Chat Completions), at OpenAI
    or at any compatible server given by base_url; anthropic. OpenAI's and Anthropic's own APIs need a key. The
    client profile (accounting.tokens.framing) says how the scripted backend's estimates frame definitions and
    results."""
    if name == "scripted":
        from wismo.runs.agent.scripted import ScriptedBackend

        return ScriptedBackend(model or "scripted-v1", profile=profile)
    if name in ("openai", "openai-chat"):
        from wismo.runs.agent.compatible import DEFAULT_MODEL, OPENAI_HOST, where

        target = base_url or os.environ.get("OPENAI_BASE_URL")
        if not model and target and where(target)[0] != OPENAI_HOST:
            # OpenAI's model id means nothing to another server; better to ask than to send it.
            raise BackendError(
                f"{name} backend: give the model id the server at {target} serves, for example: "
                f"wismo evaluate focused 3 qwen2.5:7b {name} --base-url {target}"
            )
        if name == "openai":
            from wismo.runs.agent.openai_backend import OpenAIBackend

            return OpenAIBackend(model or DEFAULT_MODEL, base_url=base_url, timeout_s=timeout_s)
        from wismo.runs.agent.openai_chat_backend import OpenAIChatBackend

        return OpenAIChatBackend(model or DEFAULT_MODEL, base_url=base_url, timeout_s=timeout_s)
    if name == "anthropic":
        from wismo.runs.agent.anthropic_backend import AnthropicBackend

        if not model:
            raise BackendError(
                "anthropic backend: give a model id, for example: wismo evaluate focused 1 <model-id> anthropic"
            )
        return AnthropicBackend(model, base_url=base_url, timeout_s=timeout_s)
    raise BackendError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
