"""What a server is given at start-up: the fixtures folder and the generated large orders from its environment,
and the session limits of Streamable HTTP from its options."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from wismo.core.errors import InputError
from wismo.domain import Dataset, load
from wismo.domain.generate import sizes_from


def server_dataset() -> Dataset:
    """The dataset a server serves: data/fixtures (or WISMO_FIXTURES), plus the large orders WISMO_LARGE_ORDERS
    lists, generated from WISMO_LARGE_SEED (default 0)."""
    sizes = sizes_from(os.environ.get("WISMO_LARGE_ORDERS"))
    seed = os.environ.get("WISMO_LARGE_SEED") or "0"
    try:
        seed_value = int(seed)
    except ValueError:
        raise InputError(f"WISMO_LARGE_SEED must be an integer, not {seed!r}") from None
    return load(large=sizes, seed=seed_value)


# A local server beside one MCP client needs a handful of sessions. The cap bounds memory (about 39 KB a session,
# measured on mcp 2.3.0: 100 sessions is some 4 MB); the idle timeout frees a forgotten session's memory within
# minutes, where the SDK's default (30 minutes, 10,000 sessions, some 400 MB) is a hosted server's.
DEFAULT_MAX_SESSIONS = 100
DEFAULT_IDLE_TIMEOUT_S = 600.0


class SessionLimitInvalid(InputError):
    """A session limit `name` was given the value `value`, which is not allowed: `allowed` says what is."""

    def __init__(self, name: str, value: object, allowed: str) -> None:
        super().__init__(f"{name} must be {allowed}, not {value!r}")
        self.name = name
        self.value = value
        self.allowed = allowed


@dataclass(frozen=True)
class SessionLimits:
    """How many Streamable HTTP sessions a server keeps at once, and how long one lives with no request in flight."""

    max_sessions: int = DEFAULT_MAX_SESSIONS
    idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S

    def __post_init__(self) -> None:
        if isinstance(self.max_sessions, bool) or not isinstance(self.max_sessions, int) or self.max_sessions < 1:
            raise SessionLimitInvalid("max_sessions", self.max_sessions, "a whole number of sessions, 1 or more")
        timeout = self.idle_timeout_s
        number = isinstance(timeout, int | float) and not isinstance(timeout, bool)
        if not (number and math.isfinite(timeout) and timeout > 0):
            raise SessionLimitInvalid("idle_timeout_s", timeout, "a positive, finite number of seconds")
