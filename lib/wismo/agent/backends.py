"""Choose a model backend by name."""

from __future__ import annotations

from .base import Backend, BackendError

BACKENDS = ("scripted", "openai", "anthropic")


def make(name: str, model: str | None = None, base_url: str | None = None) -> Backend:
    """A backend by name: scripted (no network), openai or anthropic (live, need a key)."""
    if name == "scripted":
        from .scripted import ScriptedBackend

        return ScriptedBackend(model or "scripted-v1")
    if name == "openai":
        from .openai_backend import DEFAULT_MODEL, OpenAIBackend

        return OpenAIBackend(model or DEFAULT_MODEL, base_url=base_url)
    if name == "anthropic":
        from .anthropic_backend import AnthropicBackend

        if not model:
            raise BackendError("anthropic backend: give a model id, for example: wismo evaluate focused 1 <model-id> anthropic")
        return AnthropicBackend(model, base_url=base_url)
    raise BackendError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
