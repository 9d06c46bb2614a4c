"""Prices from genai-prices, offline, with its version and its data's date; cache reads and writes priced apart."""

import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
import time
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

from wismo.accounting.cost import caching, price_cache, prices

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def offline(monkeypatch):
    """No connection may be opened while prices are looked up and charged."""

    def refuse(*args, **kwargs):
        raise AssertionError("genai-prices tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_lookup_is_offline_and_says_where_it_comes_from(offline):
    price = prices.lookup("gpt-4.1-mini")
    assert (price.provider, price.input, price.cached_input, price.cache_write, price.output) == (
        "openai",
        0.4,
        0.1,
        0.4,
        1.6,
    )
    pinned = next(
        d
        for d in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
        if d.startswith("genai-prices==")
    )
    assert prices.version() == version("genai-prices") == pinned.split("==")[1]
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", prices.data_date())
    assert (
        price.source == f"genai-prices {prices.version()}, price data of {prices.data_date()}"
        and price.on == prices.data_date()
    )
    # The dated snapshot id the article's run used resolves to the same prices.
    assert prices.lookup("gpt-4.1-mini-2025-04-14").input == price.input


def test_calc_price_charges_cache_reads_and_writes_apart(offline):
    claude = prices.lookup("claude-sonnet-4-5")
    assert (claude.input, claude.cached_input, claude.cache_write, claude.output) == (3.0, 0.3, 3.75, 15.0)
    # 300 uncached x $3 + 400 read x $0.30 + 300 written x $3.75 + 50 output x $15 = $2,895 per million calls.
    usage = [prices.CallUsage(input=1000, read=400, write=300, output=50)]
    assert prices.charge(claude, usage) == pytest.approx(0.002895, abs=1e-12)
    assert float(prices.flat(claude, usage[0])) == pytest.approx(0.002895, abs=1e-12)
    # The case study's three explicit-breakpoint calls, by hand: 0.0225 + 0.0693 + 0.0747.
    calls = prices.usages(caching.apply((6000, 24000, 42000), caching.EXPLICIT), [0, 0, 0])
    assert prices.charge(claude, calls) == pytest.approx(0.1665, abs=1e-12)
    # OpenAI reads at a quarter of the input price on gpt-4.1-mini, and there is no write premium.
    mini = prices.lookup("gpt-4.1-mini")
    assert prices.charge(mini, [prices.CallUsage(1_000_000, 500_000, 0, 100_000)]) == pytest.approx(0.41)


def test_size_tiers_apply_per_request(offline):
    claude = prices.lookup("claude-sonnet-4-5")
    assert claude.tiered and claude.tier_start == 200_000 and not claude.flat_for(200_000) and claude.flat_for(199_999)
    one_big = prices.charge(claude, [prices.CallUsage(300_000, 0, 0, 0)])
    two_small = prices.charge(claude, [prices.CallUsage(150_000, 0, 0, 0)] * 2)
    assert two_small == pytest.approx(0.9) and one_big > two_small


def test_a_model_the_library_lacks_is_priced_by_parameters(offline):
    with pytest.raises(prices.UnknownModel, match="no price for model 'scripted-v1'; give its prices as parameters"):
        prices.lookup("scripted-v1")
    mine = prices.given("my-model", {"input": 1.0, "output": 2.0})
    assert (mine.cached_input, mine.cache_write, mine.from_library) == (1.0, 1.0, False)
    assert prices.charge(mine, [prices.CallUsage(1_000_000, 0, 0, 1_000_000)]) == pytest.approx(3.0)
    with pytest.raises(ValueError, match="needs input and output"):
        prices.given("my-model", {"input": 1.0, "outptu": 2.0})
    chosen = prices.resolve(
        ["gpt-4.1-mini", "my-model"], {"gpt-4.1-mini": {"input": 9, "output": 9}, "my-model": {"input": 1, "output": 2}}
    )
    assert [(p.model, p.input, p.source) for p in chosen] == [
        ("gpt-4.1-mini", 9.0, "parameters"),
        ("my-model", 1.0, "parameters"),
    ]
    assert prices.from_dict(chosen[0].as_dict()) == chosen[0]
    assert prices.usd(1234.5) == "USD 1,234.50" and prices.usd(0.0234) == "USD 0.0234" and prices.usd(None) == "–"


@pytest.fixture
def cache_in(tmp_path, monkeypatch):
    """The price cache in a folder of this test's own, read afresh."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(price_cache.CACHE_ENV, str(folder))
    price_cache.reread()
    yield folder
    price_cache.reread()


def _cache_file(folder: Path) -> Path:
    return folder / f"prices-genai-prices-{version('genai-prices')}.jsonl"


def _kept(folder: Path) -> dict[tuple, dict]:
    """The answers the cache file holds, by lookup (the last line of each), lines planted by a test passed over."""
    found = {}
    for line in _cache_file(folder).read_text().splitlines():
        try:
            record = json.loads(line)
            found[tuple(record["key"])] = record["answer"]
        except (ValueError, RecursionError, TypeError, KeyError):
            continue
    return found


LOOKUP = """
import sys
from wismo.accounting.cost import prices
for m in sys.argv[1:]:
    try:
        print(repr(prices.lookup(m)))
    except prices.UnknownModel as e:
        print('unknown:', e)
print(prices.version())
print('imported' if 'genai_prices' in sys.modules else 'not imported')
"""


def _fresh_lookup(folder: Path | None, *models: str, timeout: float = 60) -> list[str]:
    """Each model's lookup in a new interpreter with the cache in `folder` (None: no cache), the library's version,
    and whether it imported the library."""
    env = {**os.environ, price_cache.CACHE_ENV: "" if folder is None else str(folder)}
    done = subprocess.run(
        [sys.executable, "-c", LOOKUP, *models], env=env, capture_output=True, text=True, check=True, timeout=timeout
    )
    return done.stdout.splitlines()


def test_a_lookup_is_kept_between_runs_and_the_next_run_answers_the_same_without_the_library(tmp_path):
    folder = tmp_path / "cache"
    first = _fresh_lookup(folder, "gpt-4.1-mini", "claude-sonnet-4-5", "no-such-model-here")
    assert first[-1] == "imported" and _cache_file(folder).is_file()
    again = _fresh_lookup(folder, "gpt-4.1-mini", "claude-sonnet-4-5", "no-such-model-here")
    assert again[:-1] == first[:-1] and again[-1] == "not imported"
    assert first[2].startswith("unknown: genai-prices ") and "no-such-model-here" in first[2]
    assert first[3] == version("genai-prices")
    # Without a cache the library answers every time, and the same.
    assert _fresh_lookup(None, "gpt-4.1-mini") == [first[0], first[3], "imported"]


def test_the_version_is_read_from_the_metadata_without_importing_the_library(tmp_path):
    assert _fresh_lookup(tmp_path / "cache") == [version("genai-prices"), "not imported"]


def test_a_date_and_a_provider_are_lookups_of_their_own(cache_in):
    asked = [
        ("gpt-4.1-mini", None, None),
        ("gpt-4.1-mini", None, "2025-06-01"),
        ("claude-3-haiku", None, None),
        ("claude-3-haiku", "google", None),
    ]
    library = [prices.lookup(m, provider=p, on=on) for m, p, on in asked]
    assert library[1].on == "2025-06-01" != library[0].on
    assert (library[2].provider, library[3].provider) == ("anthropic", "google")
    assert set(_kept(cache_in)) == set(asked)
    price_cache.reread()
    assert [prices.lookup(m, provider=p, on=on) for m, p, on in asked] == library


def test_no_cache_when_its_folder_is_set_empty(tmp_path, monkeypatch):
    monkeypatch.setenv(price_cache.CACHE_ENV, "")
    price_cache.reread()
    assert price_cache.folder() is None
    monkeypatch.chdir(tmp_path)
    assert prices.lookup("gpt-4.1-mini").input == 0.4 and not list(tmp_path.iterdir())


def _line(**changes) -> str:
    record = {"schema": price_cache.SCHEMA, "version": version("genai-prices"), "key": ["gpt-4.1-mini", None, None]}
    record["answer"] = {"unknown": "absent"}  # as the library would say of a model it lacks: wrong only for this one
    return json.dumps({**record, **changes})


@pytest.mark.parametrize(
    "held",
    [
        "not json at all {",
        _line(version="0.0.1"),
        _line(schema="other/1"),
        _line(key="gpt-4.1-mini"),
        _line(key=["gpt-4.1-mini", 3, None]),
        _line(key=["gpt-4.1-mini", None]),
        json.dumps([1, 2, 3]),
        "[" * 3_000,
        _line(key=[["["] * 500, None, None]).replace('"["', "["),
        _line(answer={"unknown": "x" * price_cache.LONGEST_LINE}),
        _line() + "\n" + " " * price_cache.MOST_BYTES,
    ],
    ids=[
        "not-json",
        "other-version",
        "other-schema",
        "key-not-a-list",
        "provider-not-text",
        "key-short",
        "not-an-object",
        "deep",
        "deep-key",
        "line-too-long",
        "file-too-long",
    ],
)
def test_a_line_wismo_did_not_write_is_ignored_and_the_lookup_kept_anew(cache_in, held):
    _cache_file(cache_in).parent.mkdir(parents=True)
    _cache_file(cache_in).write_text(held + "\n")
    assert prices.lookup("gpt-4.1-mini").input == 0.4
    assert _kept(cache_in)[("gpt-4.1-mini", None, None)]["inputPerMTok"] == 0.4
    price_cache.reread()
    assert price_cache.get("gpt-4.1-mini", None, None) is not None  # what was written anew is read back


def test_a_tampered_price_in_the_cache_is_not_taken(cache_in):
    library = prices.lookup("gpt-4.1-mini")
    good = json.loads(_line())
    answer = _kept(cache_in)[("gpt-4.1-mini", None, None)]
    tampered = [
        {**answer, "inputPerMTok": -1.0},
        {**answer, "inputPerMTok": -0.0},
        {**answer, "inputPerMTok": float("inf")},
        {**answer, "outputPerMTok": float("nan")},
        {**answer, "inputPerMTok": "0.4"},
        {**answer, "inputPerMTok": True},
        {**answer, "model": "gpt-4o"},
        {**answer, "extra": 1},
        {**answer, "source": "genai-prices 9.9.9, price data of 2030-01-01"},
        {**answer, "source": answer["source"] + " and more"},
        {**answer, "pricedOn": "not-a-date"},
        {**answer, "provider": "Not A Provider!"},
        {**answer, "tierStartsAt": -5, "tiered": True},
        {**answer, "tierStartsAt": True, "tiered": True},
        {**answer, "tierStartsAt": 10**40, "tiered": True},
        {"unknown": 3},
        {"unknown": "\x1b[31mfake"},
    ]
    for entry in tampered:
        _cache_file(cache_in).write_text(json.dumps({**good, "answer": entry}) + "\n")
        price_cache.reread()
        assert prices.lookup("gpt-4.1-mini") == library, entry
    # A number too large for a float is infinity to json.
    _cache_file(cache_in).write_text(
        json.dumps({**good, "answer": {**answer, "inputPerMTok": 7.5}}).replace("7.5", "1e999")
    )
    price_cache.reread()
    assert prices.lookup("gpt-4.1-mini") == library
    # An answer for another provider than the one asked for is not taken either.
    _cache_file(cache_in).write_text(json.dumps({**good, "key": ["gpt-4.1-mini", "azure", None], "answer": answer}))
    price_cache.reread()
    assert price_cache.get("gpt-4.1-mini", "azure", None) is None
    # A price changed within the rules is taken: the cache is what answers.
    _cache_file(cache_in).write_text(json.dumps({**good, "answer": {**answer, "inputPerMTok": 9.5}}) + "\n")
    price_cache.reread()
    assert prices.lookup("gpt-4.1-mini").input == 9.5
    # And so is the reason the library lacks a model, given in the library's own words.
    _cache_file(cache_in).write_text(json.dumps({**good, "answer": {"unknown": "absent"}}) + "\n")
    price_cache.reread()
    with pytest.raises(prices.UnknownModel, match="has no price for model 'gpt-4.1-mini'; give its prices"):
        prices.lookup("gpt-4.1-mini")


def test_the_cache_file_is_the_users_alone(cache_in):
    prices.lookup("gpt-4.1-mini")
    assert _cache_file(cache_in).stat().st_mode & 0o077 == 0


def test_no_version_and_no_cache_where_the_metadata_is_not_one_folder(tmp_path, monkeypatch):
    site = tmp_path / "site"
    (site / "genai_prices").mkdir(parents=True)
    (site / "genai_prices" / "__init__.py").write_text("")
    spec = importlib.util.spec_from_file_location("genai_prices", site / "genai_prices" / "__init__.py")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: spec)
    price_cache.reread()
    try:
        assert price_cache.installed_version() is None  # no metadata folder
        (site / "genai_prices-1.0.dist-info").mkdir()
        price_cache.reread()
        assert price_cache.installed_version() == "1.0"
        (site / "genai_prices-2.0.dist-info").mkdir()  # two: which one is installed is not known this way
        price_cache.reread()
        assert price_cache.installed_version() is None
    finally:
        price_cache.reread()


def test_a_cache_that_cannot_be_written_leaves_the_lookup_as_it_was(cache_in):
    cache_in.write_text("a file where the cache's folder would be")
    assert prices.lookup("gpt-4.1-mini").input == 0.4
    assert cache_in.read_text() == "a file where the cache's folder would be"


def test_a_line_cut_short_spoils_only_itself(cache_in):
    _cache_file(cache_in).parent.mkdir(parents=True)
    _cache_file(cache_in).write_text(_line()[:40])  # a process stopped while it wrote
    prices.lookup("gpt-4.1-mini")
    price_cache.reread()
    assert price_cache.get("gpt-4.1-mini", None, None) is not None


@pytest.mark.parametrize("kind", ["fifo", "folder", "link"])
def test_a_cache_path_that_is_no_regular_file_is_left_alone_and_never_waited_on(tmp_path, kind):
    folder = tmp_path / "cache"
    folder.mkdir()
    path, target = _cache_file(folder), tmp_path / "elsewhere.jsonl"
    target.write_text("the user's own file\n")
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        path.symlink_to(target)
    assert _fresh_lookup(folder, "gpt-4.1-mini", timeout=30)[-1] == "imported"  # no answer read from it
    assert target.read_text() == "the user's own file\n" and not [p for p in folder.iterdir() if p != path]


def test_processes_that_look_up_at_once_keep_every_answer(tmp_path):
    folder = tmp_path / "cache"
    models = ["gpt-4.1-mini", "gpt-4o", "claude-sonnet-4-5", "claude-3-haiku", "gpt-4.1", "o3", "gpt-4o-mini", "none-x"]
    env = {**os.environ, price_cache.CACHE_ENV: str(folder)}
    started = [subprocess.Popen([sys.executable, "-c", LOOKUP, m], env=env, stdout=subprocess.DEVNULL) for m in models]
    assert [p.wait(120) for p in started] == [0] * len(models)
    assert {k[0] for k in _kept(folder)} == set(models)


def test_a_full_cache_is_written_anew_with_its_newest_answers_and_goes_on_keeping(cache_in, monkeypatch):
    monkeypatch.setattr(price_cache, "FULL_BYTES", 2_000)  # about eight lines
    monkeypatch.setattr(price_cache, "KEPT", 3)
    rewrites = []
    write_anew = price_cache._write_anew
    monkeypatch.setattr(price_cache, "_write_anew", lambda *a: rewrites.append(a) or write_anew(*a))
    for n in range(40):
        with pytest.raises(prices.UnknownModel):
            prices.lookup(f"junk-model-{n}")
        assert _cache_file(cache_in).stat().st_size < 2_000 + price_cache.LONGEST_LINE
    prices.lookup("gpt-4.1-mini")
    kept = _kept(cache_in)
    assert ("gpt-4.1-mini", None, None) in kept and ("junk-model-39", None, None) in kept
    assert ("junk-model-0", None, None) not in kept
    assert 0 < len(rewrites) <= 40 // 3  # not one a lookup: a file written anew has room again
    assert not [p for p in cache_in.iterdir() if p != _cache_file(cache_in)]  # no file staged and left behind


def test_a_full_cache_written_anew_keeps_what_other_processes_appended(cache_in, monkeypatch):
    monkeypatch.setattr(price_cache, "FULL_BYTES", 2_000)
    monkeypatch.setattr(price_cache, "KEPT", 4)
    prices.lookup("gpt-4.1-mini")  # this process has read the file: it holds one answer
    others = "".join(_line(key=[f"other-{n}", None, None]) + "\n" for n in [*range(20), 0])  # by others since
    with _cache_file(cache_in).open("a") as handle:
        handle.write(others)
    with pytest.raises(prices.UnknownModel):
        prices.lookup("this-process-model")
    kept = list(_kept(cache_in))
    # The newest answers, in the order last written: other-0 was written again after other-19.
    assert kept == [("other-18", None, None), ("other-19", None, None), ("other-0", None, None)] + [
        ("this-process-model", None, None)
    ]


def test_a_file_written_anew_removes_what_a_stopped_rewrite_left_long_ago(cache_in, monkeypatch):
    monkeypatch.setattr(price_cache, "FULL_BYTES", 500)
    cache_in.mkdir()
    old, fresh = cache_in / f".{_cache_file(cache_in).name}.old", cache_in / f".{_cache_file(cache_in).name}.fresh"
    old.write_text("staged by a process stopped long ago")
    fresh.write_text("staged by a process writing now")
    long_ago = time.time() - price_cache.STALE_S - 60
    os.utime(old, (long_ago, long_ago))
    for n in range(6):
        with pytest.raises(prices.UnknownModel):
            prices.lookup(f"junk-model-{n}")
    assert not old.exists() and fresh.exists()
