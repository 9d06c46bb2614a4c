"""Figures published in the source documents, loaded from data/reference with their source."""

from __future__ import annotations

import json
from typing import Any, cast

from wismo.core.paths import DATA


def load(name: str) -> dict[str, Any]:
    """One reference file (for example 'context-budget-case-study'); every file carries a 'source' block."""
    path = DATA / "reference" / f"{name}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    if "source" not in data:
        raise ValueError(f"{path} has no 'source' block; every reference figure must say where it comes from")
    return cast("dict[str, Any]", data)


REPRODUCED = ("context-budget-case-study",)  # the source documents whose worked numbers a study may reproduce


def names() -> tuple[str, ...]:
    """The source documents whose worked numbers the reports can reproduce (a study's `reproduce`)."""
    return REPRODUCED
