"""`make peers`: the `wismo tokens --json` outputs of several servers gathered into one file, and their table
(printed, and written beside the file as .txt); run as `wismo peers OUT.json LABEL=MEASUREMENT.json ...`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, cast

from wismo.core.errors import InputError
from wismo.core.jsonfmt import write_stable
from wismo.studies.audit.table import peers_table

if TYPE_CHECKING:
    from wismo.studies.audit.measure import Measurement

ABOUT = (
    "`wismo tokens --json` on each server, labelled with the package and the version installed; every figure "
    "tiktoken-estimated with the method and encoding beside it; wall times under 'timings' only."
)


def gather(pairs: list[str]) -> dict[str, Measurement]:
    """{label: measurement} from LABEL=FILE arguments, in the order given; a ValueError names a bad argument."""
    measured: dict[str, Measurement] = {}
    for pair in pairs:
        label, sep, file = pair.partition("=")
        if not sep or not label or not file:
            raise InputError(f"expected LABEL=FILE, got {pair!r}")
        try:
            measured[label] = cast("Measurement", json.loads(Path(file).read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            raise InputError(f"{label}: cannot read the measurement {file} ({exc})") from None
    return measured


def write(out: str | Path, measured: dict[str, Measurement]) -> tuple[Path, str]:
    """Write OUT.json (sorted keys) and the table beside it as OUT.txt; the JSON's path and the table."""
    path = write_stable(out, {"about": ABOUT, "servers": measured})
    text = peers_table(measured)
    path.with_suffix(".txt").write_text(text + "\n", encoding="utf-8")
    return path, text
