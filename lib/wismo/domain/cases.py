"""The inputs of the comparison: the six article cases and the unfriendly identifiers (data/fixtures/cases.json)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wismo.domain.dataset import fixtures_dir
from wismo.domain.ids import MAX_ID_LENGTH, quote


@dataclass(frozen=True)
class Case:
    """One input to drive through both designs: an order ID (any JSON value, for unfriendly cases) and a label."""

    label: str
    order_id: Any
    unfriendly: bool

    @property
    def shown(self) -> str:
        """The input as a report shows it: quoted, escaped and shortened when long."""
        if isinstance(self.order_id, str) and len(self.order_id) > MAX_ID_LENGTH:
            return f"{quote(self.order_id, 12)} ({len(self.order_id)} characters)"
        return quote(self.order_id) if isinstance(self.order_id, str) else json.dumps(self.order_id)


def _expand(value: Any) -> Any:
    """A literal value, or {"prefix", "repeat", "times"} for inputs too long to write out."""
    if isinstance(value, dict) and "repeat" in value:
        return value.get("prefix", "") + value["repeat"] * int(value["times"])
    return value


def load_cases(
    orders: list[str] | None = None, unfriendly: bool = True, folder: str | Path | None = None
) -> list[Case]:
    """The comparison's cases: the named orders (default all six), then the unfriendly inputs if asked."""
    spec = json.loads((Path(folder) if folder else fixtures_dir()).joinpath("cases.json").read_text(encoding="utf-8"))
    known = {row["orderId"]: row["case"] for row in spec["orders"]}
    wanted = orders if orders is not None else list(known)
    unknown = [o for o in wanted if o not in known]
    if unknown:
        raise ValueError(
            f"not a case of the comparison: {', '.join(map(str, unknown))}; the cases are {', '.join(known)}"
        )
    cases = [Case(known[o], o, False) for o in wanted]
    if unfriendly:
        cases += [Case(row["label"], _expand(row["orderId"]), True) for row in spec["unfriendly"]]
    return cases
