"""Breaking points found by a search on order size, checked against a scan and confirmed over MCP."""

import itertools
import math
import random

import pytest

from wismo.domain.generate import generate
from wismo.mcp.client import pool
from wismo.reports.analyses import breaking, sweep

pytestmark = pytest.mark.anyio


def test_an_order_of_n_plus_one_lines_is_the_order_of_n_plus_one_line():
    small, big = generate(40), generate(41)
    assert big["orders"][0]["items"][:40] == small["orders"][0]["items"]
    strip = lambda rs: [{k: v for k, v in r.items() if not k.endswith("Id")} for r in rs]  # noqa: E731  (IDs carry N)
    assert strip(big["reservations"])[: len(small["reservations"])] == strip(small["reservations"])


async def test_bisection_finds_the_first_size_a_scan_finds():
    criterion = breaking.criteria(window=10**9, budget=6000)[1]  # the session's total input over 6,000 tokens
    scanned = None
    for n in range(1, 41):
        if criterion.broken(await breaking._row_in_process("focused", n, "o200k_base", None)):
            scanned = n
            break
    assert scanned is not None and 1 < scanned < 40
    assert await breaking.first_size("focused", criterion, 1, 40, "o200k_base", None) == scanned


FIGURES = {
    # name: a figure that never falls as N grows
    "linear": lambda n: 1_000 + 137 * n,
    "convex": lambda n: 50 * n + n * n,
    "a step": lambda n: 0 if n < 777 else 10**6,
    "flat, then steep": lambda n: 5 if n < 900 else 5 + (n - 899) * 1_000,
    "steps of 40": lambda n: 40 * (n // 40),
}


@pytest.mark.parametrize("share", [0.001, 0.3, 0.5, 0.97])
@pytest.mark.parametrize("name", FIGURES)
async def test_the_search_finds_the_first_size_a_scan_finds_within_three_probes_a_halving(name, share):
    figure = FIGURES[name]
    low, top = 1, 1_000
    limit = figure(low) + int(share * (figure(top) - figure(low)))  # inside the bracket: low does not break, top does
    scanned = next(n for n in range(low + 1, top + 1) if figure(n) > limit)
    probes = []

    async def figure_at(n):
        probes.append(n)
        return figure(n)

    found = await breaking.first_over(figure_at, limit, (low, figure(low)), (top, figure(top)))
    assert found == scanned, (name, limit, probes)
    assert len(probes) <= 3 * math.ceil(math.log2(top - low)), probes
    if name == "linear":  # the figures of the scale report are nearly linear: the search lands at once
        assert len(probes) <= 2, probes


async def test_the_search_holds_its_bound_on_random_figures_that_never_fall():
    rng = random.Random(32)  # seeded: the same 300 figures every run
    for _ in range(300):
        top = rng.randint(3, 3_000)
        steps = [rng.choice((0, 0, 1, rng.randint(1, 50), rng.randint(1, 10_000))) for _ in range(top + 1)]
        values = list(itertools.accumulate(steps))
        if values[1] == values[top]:
            continue  # flat: no limit lies inside the bracket
        limit = rng.randint(values[1], values[top] - 1)
        probes = []

        async def figure_at(n, values=values, probes=probes):
            probes.append(n)
            return values[n]

        found = await breaking.first_over(figure_at, limit, (1, values[1]), (top, values[top]))
        assert found == next(n for n in range(2, top + 1) if values[n] > limit), (top, limit, probes)
        assert len(probes) <= 3 * math.ceil(math.log2(top - 1)), (top, limit, probes)


async def test_breaking_points_are_bracketed_by_the_sweep_and_confirmed_over_mcp():
    try:
        rows, _ = await sweep.measure([1, 10, 100])
        found = await breaking.breaking_points(rows, window=12_000, budget=20_000)
    finally:
        await pool.stop_all()
    by = {r["design"]: r for r in found}
    assert set(by) == {"granular", "focused", "scoped"}
    for design, row in by.items():
        for name in ("first N over the window", "first N over the budget"):
            n = row[name]
            around = breaking.bracket(
                rows, design, next(c for c in breaking.criteria(12_000, 20_000) if c.name == name)
            )
            low, top = ((around[0] or {"lines": 0})["lines"], around[1]["lines"]) if around else (None, None)
            assert n is None or low < n <= top, (design, name, n, low, top)
    assert by["scoped"]["first N over the window"] is None or by["scoped"]["first N over the window"] > 10
    assert by["granular"]["first N over the budget"] is not None


async def test_a_boundary_mcp_does_not_confirm_is_an_error():
    criterion = breaking.criteria(window=10**9, budget=6000)[1]
    true = await breaking.first_size("focused", criterion, 1, 40, "o200k_base", None)
    # Both on one server: the size far below the boundary is not confirmed, the boundary itself is.
    wrong, right = await breaking.confirm("focused", [(2, criterion), (true, criterion)], "o200k_base", None)
    assert wrong == {"design": "focused", "criterion": "first N over the budget", "N": 2, "confirmed over MCP": False}
    assert right == {**wrong, "N": true, "confirmed over MCP": True}
