"""Where things live in a checkout: notebooks, data and outputs, independent of the working directory."""

from __future__ import annotations

from pathlib import Path

from .domain.dataset import REPO_ROOT

NOTEBOOKS = REPO_ROOT / "notebooks"
DATA = REPO_ROOT / "data"
OUTPUTS = REPO_ROOT / "outputs"


def output_dir(value: str | Path | None = None) -> Path:
    """An output folder: absolute as given, or relative to the repository root (default outputs/), created."""
    path = Path(value) if value else OUTPUTS
    path = path if path.is_absolute() else REPO_ROOT / path
    path.mkdir(parents=True, exist_ok=True)
    return path
