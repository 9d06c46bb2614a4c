"""The build's shared measurement of the generated orders: keys, entries, locks, and who measures what."""

import asyncio
import shutil
import threading
import time

import anyio
import pytest

from wismo.core.paths import fixtures_dir
from wismo.domain.pages import DEFAULT_CAP
from wismo.reports.analyses import measurements, sweep


@pytest.fixture
def shared(tmp_path, monkeypatch):
    """A build's measurement folder, named in WISMO_MEASUREMENTS."""
    folder = tmp_path / "measurements"
    monkeypatch.setenv(measurements.ENV, str(folder))
    return folder


@pytest.fixture
def measured(monkeypatch):
    """sweep._drive replaced by a slow fake: every (design, size) it measures, in order, by thread."""
    calls = []

    async def fake(plan, cap, keep, done, progress=None):
        out = {}
        for design, sizes in plan.items():
            out[design] = {}
            for n in sizes:
                calls.append((design, n))
                await anyio.sleep(0.05)  # long enough for a second caller to arrive meanwhile
                out[design][n] = measurements.Measured([{"name": design}], [[{"output": f"{design} {n} {cap}"}]])
                done(design, n, out[design][n])
        return out

    monkeypatch.setattr(sweep, "_drive", fake)
    return calls


def _key(design="focused", lines=10, cap=None, digest="d"):
    return measurements.key(measurements.facts(design, lines, cap, digest))


def test_the_key_changes_with_every_input_it_depends_on():
    base = _key()
    assert len({base, _key(design="scoped"), _key(lines=100), _key(cap=500), _key(digest="e")}) == 5
    # No cap is the server's default one: the same turns, the same key.
    assert _key(cap=None) == _key(cap=DEFAULT_CAP)


def test_the_source_digest_changes_with_a_server_source_file(tmp_path):
    package = tmp_path / "wismo"
    for name in measurements.SOURCE_PACKAGES:
        shutil.copytree(measurements.PACKAGE / name, package / name, ignore=shutil.ignore_patterns("__pycache__"))
    fixtures = tmp_path / "fixtures"
    shutil.copytree(fixtures_dir(), fixtures)
    before = measurements.source_digest(package, fixtures)
    assert before == measurements.source_digest()
    scoped = package / "mcp" / "servers" / "scoped.py"
    scoped.write_text(scoped.read_text() + "\n# one more line\n")
    assert measurements.source_digest(package, fixtures) != before
    (fixtures / "orders.json").write_text("[]")
    assert len({before, measurements.source_digest(package, fixtures)}) == 2


def test_an_entry_reads_back_exactly_as_stored_and_only_under_its_own_key(tmp_path):
    entry = measurements.Measured([{"name": "get_order", "inputSchema": {}}], [[{"output": "é", "isError": False}]])
    measurements.write(tmp_path, "abc", {"lines": 1}, entry)
    assert measurements.read(tmp_path, "abc") == entry
    (tmp_path / "other.json").write_text((tmp_path / "abc.json").read_text())
    assert measurements.read(tmp_path, "other") is None  # stored under another key
    assert measurements.read(tmp_path, "missing") is None
    assert not list(tmp_path.glob("*.partial"))


@pytest.mark.parametrize("text", ['{"key": "abc", "tools": [], "tur', "", '{"key": "abc", "tools": []}', "[1]"])
def test_a_partial_or_corrupt_entry_is_ignored_and_measured_again(shared, measured, text):
    first, _ = asyncio.run(sweep.generated_turns([10]))
    name = _key("focused", 10, None, measurements.source_digest())
    assert measurements.read(shared, name) == first["focused"][10]
    (shared / f"{name}.json").write_text(text)
    assert measurements.read(shared, name) is None
    again, source = asyncio.run(sweep.generated_turns([10]))
    assert again == first and source == {"sharedBuildMeasurement": True, "ordersMeasuredHere": 1}
    assert measured.count(("focused", 10)) == 2 and measured.count(("granular", 10)) == 1


def test_a_second_caller_reads_what_the_first_stored(shared, measured):
    first, one = asyncio.run(sweep.generated_turns([1, 10], cap=DEFAULT_CAP))
    second, two = asyncio.run(sweep.generated_turns([10, 100]))  # no cap: the same default, so 10 is shared
    assert one == {"sharedBuildMeasurement": True, "ordersMeasuredHere": 2 * len(sweep.scale_designs())}
    assert two == {"sharedBuildMeasurement": True, "ordersMeasuredHere": len(sweep.scale_designs())}
    assert all(second[d][10] == first[d][10] for d in sweep.scale_designs())
    assert sorted(measured) == sorted((d, n) for d in sweep.scale_designs() for n in (1, 10, 100))


def test_without_the_variable_nothing_is_stored(tmp_path, monkeypatch, measured):
    monkeypatch.delenv(measurements.ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    got, source = asyncio.run(sweep.generated_turns([1]))
    assert source == {"sharedBuildMeasurement": False, "ordersMeasuredHere": len(sweep.scale_designs())}
    asyncio.run(sweep.generated_turns([1]))
    assert len(measured) == 2 * len(sweep.scale_designs()) and not list(tmp_path.iterdir())


def test_of_two_concurrent_callers_exactly_one_measures_each_entry(shared, measured):
    results = []

    def caller():
        results.append(asyncio.run(sweep.generated_turns([1, 10, 100])))

    threads = [threading.Thread(target=caller) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wanted = [(d, n) for d in sweep.scale_designs() for n in (1, 10, 100)]
    assert sorted(measured) == sorted(wanted)  # each entry once, by one caller or the other
    assert results[0][0] == results[1][0]
    assert results[0][1]["ordersMeasuredHere"] + results[1][1]["ordersMeasuredHere"] == len(wanted)


def test_an_entry_whose_measurer_gave_up_is_measured_by_the_one_waiting(shared, measured):
    name = _key("scoped", 1, None, measurements.source_digest())
    held = measurements.Lock(shared, name)
    assert held.take(wait=False)
    threading.Timer(0.3, held.release).start()  # gives up without storing anything
    started = time.perf_counter()
    got, source = asyncio.run(sweep.generated_turns([1]))
    assert time.perf_counter() - started >= 0.3  # it waited for the lock
    assert source["ordersMeasuredHere"] == len(sweep.scale_designs())
    assert measured[-1] == ("scoped", 1) and measurements.read(shared, name) == got["scoped"][1]


@pytest.mark.anyio
async def test_the_shared_measurement_over_mcp_is_what_a_notebook_measures_alone(shared, monkeypatch):
    stored, _ = await sweep.generated_turns([1])
    read, source = await sweep.generated_turns([1])
    assert source == {"sharedBuildMeasurement": True, "ordersMeasuredHere": 0} and read == stored
    monkeypatch.delenv(measurements.ENV)
    alone, _ = await sweep.generated_turns([1])
    assert alone == read and sweep.summarise(read, [1]) == sweep.summarise(alone, [1])
