"""Shared test set-up: anyio on asyncio, and every report built once per session for the tests that read them."""

from dataclasses import dataclass
from pathlib import Path

import pytest


@pytest.fixture
def anyio_backend():
    return "asyncio"


def pytest_collection_modifyitems(items):
    """Every test that reads the shared build of all notebooks, or runs the benchmarks, is slow."""
    for item in items:
        if {"built_reports", "smoke"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@dataclass
class Built:
    """The output folder of one `report.build` and what it rendered."""

    out: Path
    rendered: list


@pytest.fixture(scope="session")
def built_reports(tmp_path_factory) -> Built:
    """Every notebook executed and rendered once, shared by the report checks and the browser check."""
    from wismo import report

    out = tmp_path_factory.mktemp("reports")
    return Built(out, report.build(out=out))
