"""Where things live in a checkout: notebooks, data and outputs, independent of the working directory."""

from __future__ import annotations

import os
from pathlib import Path

# lib/wismo/core/paths.py: the repository root is three folders up from this package.
REPO_ROOT = Path(__file__).resolve().parents[3]
NOTEBOOKS = REPO_ROOT / "notebooks"
DATA = REPO_ROOT / "data"
OUTPUTS = REPO_ROOT / "outputs"
DEFAULT_FIXTURES = DATA / "fixtures"
RUNS = DATA / "runs"
ARTICLE_STUDY = DATA / "studies" / "where-is-my-order.toml"  # the built-in reports are this study
STUDY_OUTPUTS = OUTPUTS / "studies"  # `wismo study run` writes under here, one folder per study file


def fixtures_dir() -> Path:
    """The fixtures folder: WISMO_FIXTURES if set, else data/fixtures in this checkout."""
    return Path(os.environ.get("WISMO_FIXTURES") or DEFAULT_FIXTURES)


def output_dir(value: str | Path | None = None) -> Path:
    """An output folder: absolute as given, or relative to the repository root (default outputs/), created."""
    path = Path(value) if value else OUTPUTS
    path = path if path.is_absolute() else REPO_ROOT / path
    path.mkdir(parents=True, exist_ok=True)
    return path
