"""What a session costs: the cumulative-context model, prompt caching and prices.

The cumulative-context model's names are the package's API; caching and prices are imported by name.
"""

from wismo.accounting.cost.session import (
    LABEL,
    Session,
    first_failing_calls,
    next_call_input,
    ratio,
    saving_percent,
    session,
    sweep,
    uniform,
)

__all__ = [
    "LABEL",
    "Session",
    "first_failing_calls",
    "next_call_input",
    "ratio",
    "saving_percent",
    "session",
    "sweep",
    "uniform",
]
