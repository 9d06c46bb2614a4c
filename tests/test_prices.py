"""Prices from genai-prices, offline, with its version and its data's date; cache reads and writes priced apart."""

import re
import socket
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

from wismo.accounting.cost import caching, prices

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
