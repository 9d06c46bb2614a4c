"""Hypothesis as every hostile pass runs it: the same examples on every run (derandomized, no database, no deadline),
and the memory a server wismo serves may use."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypedDict, TypeVar, cast

import psutil
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

MEMORY_LIMIT_MB = 400  # a server of wismo's above this (resident) has a leak or an unbounded buffer
T = TypeVar("T")  # the values a strategy draws and its check takes


class _Phases(TypedDict, total=False):
    """The phases hypothesis runs, when not its own (generation only, for a check that records instead of raising)."""

    phases: tuple[Phase, ...]


def run_examples(
    examples: int, strategy: st.SearchStrategy[T], check: Callable[[T], None], generate_only: bool = False
) -> None:
    """Hypothesis over `strategy`: `examples` values, the same every run (derandomized, no database, no deadline);
    `generate_only` skips shrinking, for a check that records what it finds instead of raising it."""
    phases: _Phases = {"phases": (Phase.generate,)} if generate_only else {}
    run = settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
        **phases,
    )(given(strategy)(check))
    run()


def rss_mb(process: psutil.Process) -> float:
    """A process's resident memory in MB."""
    return cast("float", process.memory_info().rss / 2**20)
