"""What a server reads from its environment at start-up: the fixtures folder and the generated large orders."""

from __future__ import annotations

import os

from wismo.domain import Dataset, load
from wismo.domain.generate import sizes_from


def server_dataset() -> Dataset:
    """The dataset a server serves: data/fixtures (or WISMO_FIXTURES), plus the large orders WISMO_LARGE_ORDERS
    lists, generated from WISMO_LARGE_SEED (default 0)."""
    sizes = sizes_from(os.environ.get("WISMO_LARGE_ORDERS"))
    seed = os.environ.get("WISMO_LARGE_SEED") or "0"
    try:
        seed_value = int(seed)
    except ValueError:
        raise ValueError(f"WISMO_LARGE_SEED must be an integer, not {seed!r}") from None
    return load(large=sizes, seed=seed_value)
