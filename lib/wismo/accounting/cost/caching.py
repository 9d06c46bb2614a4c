"""Prompt caching on the cumulative-context model: of each model call's input, how much is read from a cache, how
much is written to it, and how much is processed at the ordinary price.

Every call of an agent loop resends the previous call's whole input and adds the newest turn, so the longest prefix
a cache can serve to call k is call k-1's whole input. A provider caches only prefixes of at least `threshold`
tokens, and beyond that only whole increments of `granularity` tokens, so the prefix read is the previous input
rounded down to whole increments, and nothing under the threshold.

Two ways providers bill it. Automatic caching (OpenAI): every prompt is cached as it is processed, at no charge,
and a later prompt reads the cached prefix at a discount. Explicit breakpoints (Anthropic, a breakpoint at the end
of every request, as agent loops place it): the prefix up to the breakpoint is written to the cache at a premium
and read by the next call at a tenth of the input price.

The assumption, stated once: every prefix the cache could hold is a hit. Nothing is evicted between the calls of
one conversation (they come seconds apart, inside the providers' five-minute lifetime) and every request reaches
a cache holding its prefix. `apply(..., hits=False)` gives the other bound: every prefix a miss, so nothing is
read and explicit breakpoints still pay for their writes. Each conversation starts cold: a prefix shared across
conversations (instructions and tool definitions) is not counted as read on call 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

ASSUMPTION = (
    "every prefix the cache could hold is a hit (no eviction between the calls of one conversation; "
    "each conversation starts cold)"
)


class PolicyRecord(TypedDict):
    """A cache policy as JSON (Policy.as_dict)."""

    name: str
    threshold: int
    granularity: int
    writesBilled: bool
    source: str


@dataclass(frozen=True)
class Policy:
    """How a provider caches: the smallest prefix it caches, the increment it caches in, and whether writes are
    billed apart from ordinary input."""

    name: str
    threshold: int
    granularity: int
    writes: bool
    source: str

    def __post_init__(self) -> None:
        if self.threshold < 1 or self.granularity < 1:
            raise ValueError(
                f"a cache policy needs a threshold and a granularity of at least 1 token, "
                f"not {self.threshold} and {self.granularity}"
            )

    def cacheable(self, tokens: int) -> int:
        """The longest prefix of `tokens` this policy caches: none under the threshold, else whole increments."""
        if tokens < self.threshold:
            return 0
        return self.threshold + (tokens - self.threshold) // self.granularity * self.granularity

    def with_limits(self, threshold: int | None = None, granularity: int | None = None) -> Policy:
        """The same policy with another threshold or granularity (None keeps the documented one)."""
        changed = threshold is not None or granularity is not None
        return Policy(
            self.name,
            self.threshold if threshold is None else threshold,
            self.granularity if granularity is None else granularity,
            self.writes,
            "parameters" if changed else self.source,
        )

    def as_dict(self) -> PolicyRecord:
        """The policy as JSON."""
        return {
            "name": self.name,
            "threshold": self.threshold,
            "granularity": self.granularity,
            "writesBilled": self.writes,
            "source": self.source,
        }


def from_dict(d: PolicyRecord) -> Policy:
    """A policy back from its JSON (Policy.as_dict)."""
    return Policy(str(d["name"]), int(d["threshold"]), int(d["granularity"]), bool(d["writesBilled"]), str(d["source"]))


# The providers' documented rules (OpenAI's "Prompt Caching 201" cookbook and prompt-caching guide; Anthropic's
# prompt-caching documentation), as defaults a notebook parameter can override.
AUTOMATIC = Policy(
    "automatic (OpenAI)",
    1024,
    128,
    writes=False,
    source="OpenAI prompt caching: prompts of 1,024 tokens or more, hits in increments of 128 tokens, no write charge",
)
EXPLICIT = Policy(
    "explicit breakpoints (Anthropic)",
    1024,
    1,
    writes=True,
    source="Anthropic prompt caching: a breakpoint at the end of each request, at least 1,024 tokens "
    "(Claude Sonnet 4.5), writes at a premium, reads at a tenth",
)
# Anthropic models whose documented minimum cacheable prefix is not 1,024 tokens.
EXPLICIT_THRESHOLDS = {
    "claude-haiku-4-5": 4096,
    "claude-opus-4-5": 4096,
    "claude-3-5-haiku": 2048,
    "claude-3-haiku": 2048,
}
BY_PROVIDER = {"openai": AUTOMATIC, "anthropic": EXPLICIT}


def for_model(provider: str, model: str) -> Policy:
    """The documented policy of a provider's model; automatic caching for a provider not listed (said in the source)."""
    policy = BY_PROVIDER.get(provider)
    if policy is None:
        return Policy(
            "automatic (assumed)",
            AUTOMATIC.threshold,
            AUTOMATIC.granularity,
            writes=False,
            source=f"no documented rule for provider {provider!r} here: OpenAI's automatic rule assumed",
        )
    threshold = next((t for prefix, t in EXPLICIT_THRESHOLDS.items() if model.startswith(prefix)), None)
    if policy is EXPLICIT and threshold is not None:
        return Policy(
            policy.name,
            threshold,
            policy.granularity,
            policy.writes,
            policy.source.replace(
                "at least 1,024 tokens (Claude Sonnet 4.5)", f"at least {threshold:,} tokens ({model})"
            ),
        )
    return policy


@dataclass(frozen=True)
class CachedCall:
    """One model call's input split three ways: read from the cache, written to it (billed apart), and the rest."""

    input: int
    read: int
    write: int

    @property
    def uncached(self) -> int:
        """Input processed at the ordinary input price (under automatic caching this includes what gets cached)."""
        return self.input - self.read - self.write


def apply(inputs: Sequence[int], policy: Policy | None, hits: bool = True) -> tuple[CachedCall, ...]:
    """Each call's input split by the policy (None: no caching). Call k reads at most call k-1's whole input,
    rounded down to whole increments, nothing under the threshold; with explicit breakpoints it writes the rest of
    its cacheable prefix. hits=False: every prefix a miss."""
    calls, stored = [], 0
    for tokens in inputs:
        if policy is None:
            calls.append(CachedCall(tokens, 0, 0))
            continue
        cacheable = policy.cacheable(tokens)
        read = min(stored, cacheable) if hits else 0
        write = cacheable - read if policy.writes else 0
        calls.append(CachedCall(tokens, read, write))
        stored = cacheable
    return tuple(calls)


def totals(calls: Sequence[CachedCall]) -> dict[str, int]:
    """Input, read, written and uncached tokens over a whole conversation."""
    return {
        "input": sum(c.input for c in calls),
        "read": sum(c.read for c in calls),
        "write": sum(c.write for c in calls),
        "uncached": sum(c.uncached for c in calls),
    }


def first_hit(calls: Sequence[CachedCall]) -> int | None:
    """The 1-based index of the first call that reads from the cache, or None if none does."""
    return next((k for k, c in enumerate(calls, start=1) if c.read), None)


def longest_prefix(inputs: Sequence[int]) -> int:
    """The longest prefix any call of the conversation could read: the largest input but the last call's."""
    return max(inputs[:-1], default=0)
