"""Every hostile-input pass of `make fuzz` in one result (fuzz.json): tool arguments and stdio frames on every
design, HTTP abuse and abandoned sessions on the article's designs; and the counts every hostile pass shares (cases
per kind, a study run's default)."""

from __future__ import annotations

from typing import Any

SESSIONS = 3000  # abandoned sessions in the session test: the memory bound (qa/sessions.py) is stated for this many
FRAME_SHARE = 10  # a frame or HTTP case costs a normal call besides itself: a tenth as many per kind as per tool
STUDY_COUNT = 10  # argument objects per tool in a study run (qa/study_hostile.py): a few seconds per design


def per_kind(examples: int) -> int:
    """Cases per kind of frame and of HTTP case for `examples` per tool."""
    return max(1, examples // FRAME_SHARE)


def run(examples: int, cases: int | None = None, sessions: int = SESSIONS) -> dict[str, Any]:
    """Arguments (`examples` per tool), frames and HTTP (`cases` per kind, default a tenth), sessions; fuzz.json."""
    # Imported here: the command line reads SESSIONS for its help, and must not pay for hypothesis to show it.
    from wismo.qa import frames, http_abuse
    from wismo.qa.fuzz import fuzz_all
    from wismo.servers import designs

    cases = per_kind(examples) if cases is None else cases
    result = fuzz_all(examples)
    result["frames"] = frames.fuzz_frames(cases)
    result["http"] = http_abuse.abuse_http(cases, designs.article(), sessions)
    return result


def failures(result: dict[str, Any]) -> int:
    """Everything that went wrong in a fuzz result, counted: crashes, hangs, unclear errors and failed cases."""
    t = result["totals"]
    count = t["crashes"] + t["hangs"] + t["unclearErrors"]
    return count + sum(result[part]["totals"]["failures"] for part in ("frames", "http") if part in result)
