"""The in-memory dataset: the four sources loaded from data/fixtures, and lookups by identifier."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .ids import KINDS, ORDER, PAYMENT, RESERVATION, TRACKING, Kind, RecordNotFound

# The experiment's fixed clock (the article's): every "now" in the data is this instant.
CLOCK = "2026-10-08T12:00:00+00:00"

# One file per source, as if each were its own service.
SOURCE_FILES = {ORDER: "orders.json", PAYMENT: "payments.json", RESERVATION: "reservations.json", TRACKING: "tracking.json"}

# lib/wismo/domain/dataset.py -> the repository root is three folders up from this package.
REPO_ROOT = Path(__file__).resolve().parents[3]
DEFAULT_FIXTURES = REPO_ROOT / "data" / "fixtures"


class DatasetError(Exception):
    """The fixtures are missing or inconsistent; the message names the file and the record."""


def fixtures_dir() -> Path:
    """The fixtures folder: WISMO_FIXTURES if set, else data/fixtures in this checkout."""
    return Path(os.environ.get("WISMO_FIXTURES") or DEFAULT_FIXTURES)


@dataclass
class Dataset:
    """Records of every kind, keyed by identifier; read-only once loaded."""

    records: dict[Kind, dict[str, dict[str, Any]]] = field(default_factory=dict)

    def get(self, kind: Kind, value: Any) -> dict[str, Any]:
        """The record of `kind` with identifier `value`; raises a LookupFailure naming the problem."""
        ident = kind.check(value)
        try:
            return self.records[kind][ident]
        except KeyError:
            raise RecordNotFound(f"{kind.name.capitalize()} {ident} was not found.") from None

    def ids(self, kind: Kind) -> list[str]:
        """Every identifier of `kind`, in file order."""
        return list(self.records[kind])


def load(folder: str | Path | None = None, large: list[int] | None = None, seed: int | None = None) -> Dataset:
    """Load and check the four source files from `folder` (default: fixtures_dir()), plus generated large orders
    of the given sizes (default: WISMO_LARGE_ORDERS, seeded by WISMO_LARGE_SEED)."""
    from .generate import generate, sizes_from

    folder = Path(folder) if folder is not None else fixtures_dir()
    sizes = large if large is not None else sizes_from(os.environ.get("WISMO_LARGE_ORDERS"))
    seed = seed if seed is not None else int(os.environ.get("WISMO_LARGE_SEED") or 0)
    extra = {ORDER: [], PAYMENT: [], RESERVATION: [], TRACKING: []}
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
        table: dict[str, dict[str, Any]] = {}
        for row in rows + extra[kind]:
            ident = kind.check(row.get(kind.id_key))
            if ident in table:
                raise DatasetError(f"{path}: {kind.id_key} {ident} appears twice.")
            table[ident] = row
        dataset.records[kind] = table
    _check_links(dataset)
    return dataset


def _check_links(dataset: Dataset) -> None:
    """Every linked record that exists must point back to its order (missing links are allowed)."""
    links = ((PAYMENT, "paymentId"), (RESERVATION, "reservationIds"), (TRACKING, "trackingIds"))
    for order_id, order in dataset.records[ORDER].items():
        for kind, key in links:
            targets = order[key] if isinstance(order[key], list) else [order[key]]
            for target in targets:
                record = dataset.records[kind].get(target)
                if record is not None and record["orderId"] != order_id:
                    raise DatasetError(f"{kind.name} {target} is linked from {order_id} but belongs to {record['orderId']}.")
    assert set(dataset.records) == set(KINDS)
