"""Where things live in a checkout: notebooks, data and outputs, independent of the working directory."""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from wismo.core.errors import InputError

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


BUILD_ENV = "WISMO_REPORT_BUILD"  # set by the report build for its kernels: the folder it writes the reports into
SCRATCH = "wismo-by-hand"  # under the system's temporary folder: where notebooks run by hand write their JSON


def by_hand(report: str, parameters: Mapping[str, object]) -> Path:
    """A folder of its own for one run of a notebook by hand, created: under the temporary folder's SCRATCH, named
    for the report, the time (UTC) and its parameters' digest, and never one another run already has."""
    slug = re.sub(r"[^a-z0-9]+", "-", report.lower().removeprefix("the ").removesuffix(" report")).strip("-")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    digest = hashlib.sha256(json.dumps(parameters, sort_keys=True, default=str).encode()).hexdigest()[:8]
    root = Path(tempfile.gettempdir()) / SCRATCH
    root.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{slug}-{stamp}-{digest}-", dir=root))


def in_build() -> Path | None:
    """The report build's folder, when the report build runs this notebook."""
    build = os.environ.get(BUILD_ENV)
    return Path(build) if build else None


class OutputsProtected(InputError):
    """A report asked to write into the built reports' folder outside the report build: `path`."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"output_dir {path} holds the built reports, which only the report build (make report) writes; leave "
            "output_dir out (a scratch folder is used) or give another folder"
        )
        self.path = path

    def _render_traceback_(self) -> list[str]:
        # IPython shows this instead of a traceback.
        return [f"{type(self).__name__}: {self}"]


def report_dir(value: str | Path | None = None) -> Path:
    """Where a report writes its JSON, created: the folder given; none given, the report build's folder when the
    build runs the notebook, else a scratch folder outside the checkout. outputs/ itself is refused unless the build
    asked for it, so a notebook run by hand or in JupyterLab never changes the built reports."""
    build = os.environ.get(BUILD_ENV)
    if value in (None, ""):
        path = Path(build) if build else Path(tempfile.gettempdir()) / SCRATCH
    else:
        path = Path(value) if Path(value).is_absolute() else REPO_ROOT / value
    if path.resolve() == OUTPUTS.resolve() and not (build and Path(build).resolve() == OUTPUTS.resolve()):
        raise OutputsProtected(path)
    path.mkdir(parents=True, exist_ok=True)
    return path


def output_dir(value: str | Path | None = None) -> Path:
    """An output folder: absolute as given, or relative to the repository root (default outputs/), created."""
    path = Path(value) if value else OUTPUTS
    path = path if path.is_absolute() else REPO_ROOT / path
    path.mkdir(parents=True, exist_ok=True)
    return path
