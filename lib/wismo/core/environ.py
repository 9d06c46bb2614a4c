"""Environment variables set for the length of a block and put back afterwards, as they were."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def temporary_env(**values: str | None) -> Iterator[None]:
    """Set each variable to its value (None leaves it as it is) inside the block; afterwards each is restored, or
    removed again if it was not set before."""
    chosen = {name: value for name, value in values.items() if value is not None}
    previous = {name: os.environ.get(name) for name in chosen}
    os.environ.update(chosen)
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
