"""The in-memory dataset: the four sources loaded from data/fixtures, and lookups by identifier."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wismo.core.errors import InputError
from wismo.core.paths import fixtures_dir
from wismo.domain.generate import generate
from wismo.domain.ids import KINDS, ORDER, PAYMENT, RESERVATION, TRACKING, Kind
from wismo.domain.links import LINKS, Link

# One file per source, as if each were its own service.
SOURCE_FILES = {
    ORDER: "orders.json",
    PAYMENT: "payments.json",
    RESERVATION: "reservations.json",
    TRACKING: "tracking.json",
}


class DatasetError(InputError):
    """The fixtures are missing or inconsistent; the message names the file and the record."""


@dataclass
class Dataset:
    """Records of every kind, keyed by identifier; read-only once loaded."""

    records: dict[Kind, dict[str, dict[str, object]]] = field(default_factory=dict)

    def get(self, kind: Kind, value: object) -> dict[str, Any]:
        """The record of `kind` with identifier `value`; raises a LookupFailure naming the problem."""
        ident = kind.check(value)
        try:
            return self.records[kind][ident]
        except KeyError:
            raise kind.not_found(ident) from None

    def ids(self, kind: Kind) -> list[str]:
        """Every identifier of `kind`, in file order."""
        return list(self.records[kind])


def load(folder: str | Path | None = None, large: list[int] | None = None, seed: int = 0) -> Dataset:
    """Load and check the four source files from `folder` (default: fixtures_dir()), plus generated large orders
    of the given sizes (none by default; a server reads its sizes from its settings at start-up)."""
    folder = Path(folder) if folder is not None else fixtures_dir()
    sizes = large or []
    extra: dict[Kind, list[dict[str, object]]] = {ORDER: [], PAYMENT: [], RESERVATION: [], TRACKING: []}
    for n in sizes:
        generated = generate(n, seed)
        for kind, name in SOURCE_FILES.items():
            extra[kind] += generated[name.removesuffix(".json")]
    dataset = Dataset()
    for kind, name in SOURCE_FILES.items():
        path = folder / name
        try:
            rows = json.loads(path.read_text(encoding="utf-8"))["records"]
        except FileNotFoundError:
            raise DatasetError(f"{path} is missing; the {kind.name} source cannot be loaded.") from None
        except (ValueError, KeyError, TypeError) as exc:
            raise DatasetError(f"{path} is not a fixtures file with a 'records' list: {exc}") from None
        table: dict[str, dict[str, object]] = {}
        for row in rows + extra[kind]:
            ident = kind.check(row.get(kind.id_key))
            if ident in table:
                raise DatasetError(f"{path}: {kind.id_key} {ident} appears twice.")
            table[ident] = row
        dataset.records[kind] = table
    check_links(dataset)
    assert set(dataset.records) == set(KINDS)
    return dataset


def check_links(dataset: Dataset, links: tuple[Link, ...] = LINKS) -> None:
    """Every linked record that exists must point back to its order (missing links are allowed)."""
    for order_id, order in dataset.records[ORDER].items():
        for link in links:
            for target in link.ids(order):
                record = dataset.records[link.kind].get(target)
                if record is not None and record["orderId"] != order_id:
                    raise DatasetError(
                        f"{link.kind.name} {target} is linked from {order_id} but belongs to {record['orderId']}."
                    )
