"""Shared test set-up: anyio on asyncio, servers forked from one process that has imported the SDK, and every report
built once per session for the tests that read them."""

import fcntl
import os
import pickle
import select
import shutil
import signal
import subprocess
import sys
import tempfile
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import pytest

import forkserver
from wismo.core import processes


@pytest.fixture
def anyio_backend():
    return "asyncio"


# The test files that take longest, longest first, as measured on the afternoon of 2026-12-02 (seconds of tests per
# file in `make test` on 2 cores, in this order: 41, 40, 31, 26, 26, 18, 24, 13, 13, 13); the browser's after the lab,
# as it waits for the notebooks' build. `make test` hands out whole files, each to the first free worker, in
# collection order: these go first, so that no long file starts last while the other worker idles.
HEAVIEST_FIRST = (
    "test_notebooks.py",
    "test_bench.py",
    "test_build_atomic.py",
    "test_transports.py",
    "test_peer_studies.py",
    "test_lab.py",
    "test_browser.py",
    "test_servertokens.py",
    "test_http_sessions.py",
    "test_cli.py",
)


def pytest_collection_modifyitems(items):
    """Every test that reads the shared build of all notebooks, or runs the benchmarks, is slow; the heaviest files
    run first."""
    for item in items:
        if {"built_reports", "smoke"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    rank = {name: i for i, name in enumerate(HEAVIEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: each file's own order is kept


JUPYTER_PATH = os.environ.get("JUPYTER_PATH")  # as the suite found it


@pytest.fixture(scope="session", autouse=True)
def price_cache_of_its_own():
    """The price cache of this run alone, for this process and its children: the suite never reads or writes the
    user's, and it starts empty each run, so the library is looked up and the cache written as on a new machine."""
    from wismo.accounting.cost import price_cache

    folder = tempfile.mkdtemp(prefix="wismo-price-cache-")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(price_cache.CACHE_ENV, folder)
        price_cache.reread()
        yield Path(folder)
    price_cache.reread()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def forked_servers(price_cache_of_its_own):
    """For this test process and its children (notebook kernels included): the servers wismo starts are forked from
    one process that imported the MCP SDK once (tests/forkserver.py), over the same pipes and sockets as ever, and so
    are the notebook kernels (a `python3` kernelspec of the suite's own, first in JUPYTER_PATH). The tests of the
    transports, of a server's start and of the benchmark start the real interpreter instead (`real_servers`)."""
    folder = Path(tempfile.mkdtemp(prefix="wismo-fork-"))
    address = str(folder / "zygote")
    with open(folder / "zygote.log", "wb") as log:
        starter = subprocess.Popen(
            [sys.executable, str(Path(forkserver.__file__)), address, str(os.getpid())],
            stdout=subprocess.PIPE,
            stderr=log,
        )
    with starter.stdout:
        ready = starter.stdout.read(len(forkserver.READY))
        zygote = int(starter.stdout.readline() or 0)
    starter.wait(60)
    assert ready == forkserver.READY and zygote, "the test suite's zygote did not start"
    handle = os.pidfd_open(zygote)  # not our child: a pidfd, so a reused pid is never taken for it
    launcher = forkserver.launcher(folder, address)
    kernels = forkserver.kernelspec(folder / "jupyter", launcher)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(processes.INTERPRETER_ENV, str(launcher))
        patch.setenv("JUPYTER_PATH", os.pathsep.join(filter(None, [str(kernels), JUPYTER_PATH])))
        yield address
    ended = bool(select.select([handle], [], [], 0)[0])  # a pidfd reads as ready once its process has ended
    with suppress(ProcessLookupError):
        signal.pidfd_send_signal(handle, signal.SIGTERM)
    os.close(handle)
    said = (folder / "zygote.log").read_text(errors="replace")
    missed = Path(address + ".missed")
    missed = missed.read_text() if missed.exists() else ""
    shutil.rmtree(folder)
    # Not silent: a zygote that died or failed a launcher would only have made the rest of the suite slower.
    assert not ended and not missed, f"the suite's zygote ended early or missed launchers:\n{missed}{said}"


def unforked(patch: pytest.MonkeyPatch) -> None:
    """Undo forked_servers' settings within `patch`: servers and kernels start from the real interpreter."""
    patch.delenv(processes.INTERPRETER_ENV, raising=False)
    if JUPYTER_PATH is None:
        patch.delenv("JUPYTER_PATH", raising=False)
    else:
        patch.setenv("JUPYTER_PATH", JUPYTER_PATH)


@pytest.fixture
def real_servers(monkeypatch):
    """Servers and kernels started from the real interpreter, for tests of what a process start or a transport
    does."""
    unforked(monkeypatch)


@dataclass
class Built:
    """The output folder of one `report.build` and what it rendered."""

    out: Path
    rendered: list


@pytest.fixture(scope="session")
def built_reports(tmp_path_factory, request) -> Built:
    """Every notebook executed and rendered once per test run, shared by the report checks and the browser check;
    under pytest-xdist (`make test` runs several workers, a test file per worker) the first worker that needs it builds
    it, under a lock, and the others read what it rendered."""
    from wismo.reports.render import build as report

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
