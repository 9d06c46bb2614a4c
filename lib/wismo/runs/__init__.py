"""Recorded runs: their format and verification, recording through the agent loop, scoring and summaries.

The run format's names (runs.store) are the package's API; recording, scoring and summaries are imported by name.
"""

from wismo.core.paths import RUNS
from wismo.runs.agent.counters import totals
from wismo.runs.records import RecordedTrace
from wismo.runs.store import (
    IMPORTED,
    SCHEMAS,
    Run,
    RunInvalid,
    find,
    load,
    schema,
    sha256,
    sum_totals,
    verify,
    verify_trace,
)

__all__ = [
    "IMPORTED",
    "RUNS",
    "SCHEMAS",
    "RecordedTrace",
    "Run",
    "RunInvalid",
    "find",
    "load",
    "schema",
    "sha256",
    "sum_totals",
    "totals",
    "verify",
    "verify_trace",
]
