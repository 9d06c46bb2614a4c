"""Prices per million tokens (input, cached input, cache write, output) and what a conversation costs under them.

Prices come from the maintained library genai-prices, whose price data is bundled with each release (no network):
every price is shown with the library's version and the date of its data. A model the library lacks is priced by
parameters. Known models are charged through the library's own calc_price, one model call at a time, so a price
that changes with the size of a request (a tier over 200,000 input tokens) applies per request, as providers bill.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from functools import cache
from typing import TYPE_CHECKING, cast

from wismo.accounting.cost import price_cache
from wismo.accounting.cost.caching import CachedCall
from wismo.accounting.cost.price_cache import PriceRecord
from wismo.core.errors import InputError

if TYPE_CHECKING:
    from genai_prices.types import TieredPrices

LIBRARY = price_cache.LIBRARY
PER = 1_000_000  # prices are per million tokens
GIVEN = "parameters"
# What a given price may name, in USD per million tokens; cachedInput and cacheWrite default to the input price.
GIVEN_KEYS = ("input", "cachedInput", "cacheWrite", "output")
ABSENT, UNPRICED = price_cache.UNKNOWN  # why the library prices no such model


class UnknownModel(InputError, LookupError):
    """A model neither the price library nor the parameters price: `model`, and `why` the library does not
    (price_cache.UNKNOWN: it lacks the model, or has no per-token prices for it); the message says how to price it."""

    def __init__(self, model: str, why: str) -> None:
        said = {
            ABSENT: f"{LIBRARY} {version()} has no price for model {model!r}; give its prices as parameters "
            f"({', '.join(GIVEN_KEYS)} in USD per million tokens)",
            UNPRICED: f"{LIBRARY} {version()} prices model {model!r} without a per-token input and output price",
        }
        super().__init__(said[why])
        self.model = model
        self.why = why


def version() -> str:
    """The installed genai-prices version (read without importing it where its metadata allows)."""
    found = price_cache.installed_version()
    if found is not None:
        return found
    import genai_prices

    return genai_prices.__version__


@cache
def data_date() -> str:
    """The date of the bundled price data: the newest date on which its notes say a price was verified or checked."""
    from genai_prices import data_snapshot

    found = []
    for provider in data_snapshot.get_snapshot().providers:
        for text in [provider.price_comments or ""] + [m.price_comments or "" for m in provider.models]:
            found += re.findall(r"(?:[Vv]erified|[Cc]hecked) (?:on )?(\d{4}-\d{2}-\d{2})", text)
    if not found:
        raise RuntimeError(f"{LIBRARY} {version()}: its price data names no date on which a price was verified")
    return cast("str", max(found))


def _moment(on: str | None) -> datetime:
    """The instant prices are looked up for: noon UTC on `on` (ISO date), else on the price data's own date."""
    day = date.fromisoformat(on or data_date())
    return datetime(day.year, day.month, day.day, 12, tzinfo=UTC)


@dataclass(frozen=True)
class Price:
    """A model's prices in USD per million tokens, and where they come from."""

    model: str
    provider: str
    input: float
    cached_input: float
    cache_write: float
    output: float
    source: str
    on: str
    tier_start: int | None = None  # the smallest request size (input tokens) from which a tiered price changes

    @property
    def tiered(self) -> bool:
        """Whether some price changes with the size of a request."""
        return self.tier_start is not None

    def flat_for(self, input_tokens: int) -> bool:
        """Whether a request of this size pays the base prices (under every tier)."""
        return self.tier_start is None or input_tokens < self.tier_start

    @property
    def from_library(self) -> bool:
        """Whether the price library prices this model (else parameters do)."""
        return self.source != GIVEN

    def as_dict(self) -> PriceRecord:
        """The price as JSON, per million tokens."""
        return {
            "model": self.model,
            "provider": self.provider,
            "inputPerMTok": self.input,
            "cachedInputPerMTok": self.cached_input,
            "cacheWritePerMTok": self.cache_write,
            "outputPerMTok": self.output,
            "source": self.source,
            "pricedOn": self.on,
            "tiered": self.tiered,
            "tierStartsAt": self.tier_start,
        }


def from_dict(d: PriceRecord) -> Price:
    """A price back from its JSON (Price.as_dict)."""
    return Price(
        d["model"],
        d["provider"],
        d["inputPerMTok"],
        d["cachedInputPerMTok"],
        d["cacheWritePerMTok"],
        d["outputPerMTok"],
        d["source"],
        d["pricedOn"],
        d["tierStartsAt"],
    )


def _base(value: Decimal | TieredPrices | None) -> tuple[float | None, int | None]:
    """A library price as a float (a tiered price by its base tier) and where its first tier starts, if tiered."""
    if value is None:
        return None, None
    if isinstance(value, Decimal):
        return float(value), None
    return float(value.base), min(t.start for t in value.tiers)


def source() -> str:
    """How every library price is labelled: the library, its version and its data's date."""
    return price_cache.label(version(), data_date())


def lookup(model: str, provider: str | None = None, on: str | None = None) -> Price:
    """The library's prices for a model on a date (default: the price data's date); UnknownModel if it lacks it.
    Kept between runs (price_cache): the same library version gives the same answer."""
    kept = price_cache.get(model, provider, on)
    if kept is not None:
        if "unknown" in kept:
            raise UnknownModel(model, str(kept["unknown"]))
        return from_dict(cast("PriceRecord", kept))
    try:
        price = _looked_up(model, provider, on)
    except UnknownModel as exc:
        price_cache.put(model, provider, on, {"unknown": exc.why})
        raise
    price_cache.put(model, provider, on, dict(price.as_dict()))
    return price


def _looked_up(model: str, provider: str | None, on: str | None) -> Price:
    """lookup's answer from the library itself."""
    from genai_prices import data_snapshot

    try:
        found, info = data_snapshot.get_snapshot().find_provider_model(model, None, provider, None)
    except LookupError:
        raise UnknownModel(model, ABSENT) from None
    p = info.get_prices(_moment(on))
    values = {
        k: _base(getattr(p, k, None)) for k in ("input_mtok", "cache_read_mtok", "cache_write_mtok", "output_mtok")
    }
    base, output = values["input_mtok"][0], values["output_mtok"][0]
    if base is None or output is None:
        raise UnknownModel(model, UNPRICED)
    read, write = (base if (v := values[k][0]) is None else v for k in ("cache_read_mtok", "cache_write_mtok"))
    starts = [t for _, t in values.values() if t is not None]
    return Price(
        model,
        found.id,
        base,
        read,
        write,
        output,
        source(),
        on or data_date(),
        min(starts, default=None),
    )


def given(model: str, values: Mapping[str, float], on: str | None = None) -> Price:
    """A price set by parameters: input and output required, cachedInput and cacheWrite default to input."""
    unknown = sorted(set(values) - set(GIVEN_KEYS))
    if unknown or "input" not in values or "output" not in values:
        raise InputError(
            f"the price given for {model!r} needs input and output (and may give cachedInput, cacheWrite), "
            f"in USD per million tokens; it has {', '.join(sorted(values)) or 'nothing'}"
        )
    i = float(values["input"])
    return Price(
        model,
        GIVEN,
        i,
        float(values.get("cachedInput", i)),
        float(values.get("cacheWrite", i)),
        float(values["output"]),
        GIVEN,
        on or data_date(),
    )


def resolve(
    models: Iterable[str], given_prices: Mapping[str, Mapping[str, float]] | None = None, on: str | None = None
) -> list[Price]:
    """Each model's price: the given one if the parameters set it, else the library's."""
    given_prices = given_prices or {}
    return [given(m, given_prices[m], on) if m in given_prices else lookup(m, on=on) for m in models]


@dataclass(frozen=True)
class CallUsage:
    """Tokens of one model call as a provider bills them: input (cache reads and writes included), output."""

    input: int
    read: int
    write: int
    output: int


def usages(calls: Sequence[CachedCall], outputs: Sequence[int]) -> list[CallUsage]:
    """Each call's cache split joined with the output tokens the model wrote in that call."""
    if len(calls) != len(outputs):
        raise ValueError(f"{len(calls)} model calls but {len(outputs)} outputs")
    return [CallUsage(c.input, c.read, c.write, o) for c, o in zip(calls, outputs)]


def _by_library(price: Price, usage: CallUsage) -> Decimal:
    """One call charged by genai-prices' calc_price."""
    import warnings

    from genai_prices import Usage, calc_price

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an unsupported usage key must fail, not be priced as zero
        result = calc_price(
            Usage(
                input_tokens=usage.input,
                cache_read_tokens=usage.read,
                cache_write_tokens=usage.write,
                output_tokens=usage.output,
            ),
            price.model,
            provider_id=price.provider,
            genai_request_timestamp=_moment(price.on),
        )
    return result.total_price


def flat(price: Price, usage: CallUsage) -> Decimal:
    """One call charged at flat per-million prices: uncached input, reads, writes and output each at its own price."""
    uncached = usage.input - usage.read - usage.write
    dollars = (
        uncached * price.input
        + usage.read * price.cached_input
        + usage.write * price.cache_write
        + usage.output * price.output
    ) / PER
    return Decimal(str(dollars))


def charge(price: Price, calls: Iterable[CallUsage]) -> float:
    """What the calls cost in USD, each call priced on its own (the library's tiers apply per request)."""
    one = _by_library if price.from_library else flat
    return float(sum((one(price, u) for u in calls), Decimal(0)))


def usd(value: float | None) -> str:
    """Dollars as a reader reads them, named, never with a dollar sign that a notebook would take for maths: cents
    from ten cents up (USD 1.18), four decimals below, a dash for no price."""
    return "–" if value is None else f"USD {value:,.2f}" if value >= 0.1 else f"USD {value:,.4f}"
