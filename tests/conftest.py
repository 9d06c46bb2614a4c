"""Shared test set-up: anyio on asyncio, and every report built once per session for the tests that read them."""

import fcntl
import pickle
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
def built_reports(tmp_path_factory, request) -> Built:
    """Every notebook executed and rendered once per test run, shared by the report checks and the browser check;
    under pytest-xdist (`make test` runs two workers, a test file per worker) the first worker that needs it builds
    it, under a lock, and the other reads what it rendered."""
    from wismo.render import build as report

    if not hasattr(request.config, "workerinput"):  # no xdist: this process is the only one
        out = tmp_path_factory.mktemp("reports")
        return Built(out, report.build(out=out))
    shared = tmp_path_factory.getbasetemp().parent  # the same folder for every worker of this run
    out, done = shared / "reports", shared / "reports.pickle"
    with open(shared / "reports.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            done.write_bytes(pickle.dumps(report.build(out=out)))
        rendered = pickle.loads(done.read_bytes())
    return Built(out, rendered)
