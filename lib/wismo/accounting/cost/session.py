"""The cumulative-context model of the context-budget case study: every model call resends the whole history.

Input tokens of call k are base + the additions of every earlier turn; with a constant addition r per turn
that is base + (k-1)·r. Output tokens of the final answer are ignored, as in the case study.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from wismo.core.kinds import MODELLED

LABEL = MODELLED


@dataclass(frozen=True)
class Session:
    """The input tokens of each model call of one session."""

    inputs: tuple[int, ...]

    @property
    def calls(self) -> int:
        """Number of model calls."""
        return len(self.inputs)

    @property
    def total(self) -> int:
        """Input tokens processed across the whole session (the sum over every call)."""
        return sum(self.inputs)

    @property
    def final(self) -> int:
        """Input tokens carried by the last call: the context the session ends with."""
        return self.inputs[-1]

    def cumulative(self) -> list[int]:
        """Running total of input tokens after each call."""
        out, running = [], 0
        for tokens in self.inputs:
            running += tokens
            out.append(running)
        return out

    def first_over(self, window: int) -> int | None:
        """The 1-based index of the first call whose input exceeds `window`, or None if every call fits."""
        return next((k for k, tokens in enumerate(self.inputs, start=1) if tokens > window), None)


def session(base: int, additions: Sequence[int]) -> Session:
    """The general form: call 1 carries `base`, call k+1 carries call k plus the k-th turn's addition."""
    inputs, current = [base], base
    for added in additions:
        current += added
        inputs.append(current)
    return Session(tuple(inputs))


def uniform(base: int, r: int, calls: int) -> Session:
    """The case study's form: `calls` model calls, each earlier turn adding r tokens (input_k = base + (k-1)·r)."""
    if calls < 1:
        raise ValueError(f"a session has at least one model call, not {calls}")
    return session(base, [r] * (calls - 1))


def next_call_input(s: Session, r: int) -> int:
    """What the call after the last one would carry if one more turn added r tokens."""
    return s.final + r


def ratio(a: Session, b: Session) -> float:
    """How many times more input tokens session a processes than session b."""
    return a.total / b.total


def first_failing_calls(base: int, r: int, window: int) -> int:
    """The number of model calls at which a uniform session first carries more than `window` tokens."""
    if base > window:
        return 1
    if r <= 0:
        raise ValueError("with r <= 0 a session never outgrows its first call")
    # input_k = base + (k-1)·r > window  <=>  k > (window - base)/r + 1
    return (window - base) // r + 2


def sweep(base: int, rs: Sequence[int], calls: Sequence[int], window: int) -> list[dict[str, int | bool]]:
    """Total input tokens over a grid of r and number of calls, each point marked by whether it overflows."""
    rows = []
    for r in rs:
        for n in calls:
            s = uniform(base, r, n)
            rows.append(
                {"r": r, "calls": n, "total": s.total, "final": s.final, "overflows": s.first_over(window) is not None}
            )
    return rows


def saving_percent(reference: float, design: float) -> float:
    """A design's saving against the reference, in percent to one decimal (negative: it costs more)."""
    return round((reference - design) / reference * 100, 1)
