"""The counts every hostile pass shares: cases per kind of frame and of HTTP request, a study run's default, the
sessions `make fuzz` abandons."""

from __future__ import annotations

SESSIONS = 3000  # abandoned sessions in the session test: the memory bound (qa/sessions.py) is stated for this many
FRAME_SHARE = 10  # a frame or HTTP case costs a normal call besides itself: a tenth as many per kind as per tool
STUDY_COUNT = 10  # argument objects per tool in a study run (qa/study_hostile.py): a few seconds per design


def per_kind(examples: int) -> int:
    """Cases per kind of frame and of HTTP case for `examples` per tool."""
    return max(1, examples // FRAME_SHARE)
