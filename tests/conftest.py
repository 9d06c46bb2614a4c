"""Shared test set-up: anyio on asyncio, and paths into the checkout."""

import pytest


@pytest.fixture
def anyio_backend():
    return "asyncio"
