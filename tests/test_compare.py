"""The deterministic comparison: verdicts, a planted difference it must catch, byte-identical output."""

import json
import shutil

import pytest

from wismo.core.errors import ClaimFailed
from wismo.core.jsondiff import without_timings
from wismo.core.jsonfmt import stable
from wismo.core.paths import DEFAULT_FIXTURES
from wismo.reports.analyses import comparison

pytestmark = pytest.mark.anyio


NAMES = ("granular", "focused")  # the pair each difference names, the reference first


def test_differences_names_every_path():
    g = {"order": {"status": "shipped", "items": [{"sku": "A", "quantity": 1}]}, "tracking": []}
    f = {"order": {"status": "delivered", "items": [{"sku": "A", "quantity": 1.0}]}, "tracking": [], "extra": 1}
    assert comparison.differences(g, f, NAMES) == [
        {"path": "extra", "granular": "<absent>", "focused": 1},
        {"path": "order.items[0].quantity", "granular": 1, "focused": 1.0},
        {"path": "order.status", "granular": "shipped", "focused": "delivered"},
    ]
    assert comparison.differences(g, g, NAMES) == []
    assert comparison.differences([1, 2], [1], NAMES) == [{"path": "<root>", "granular": [1, 2], "focused": [1]}]


@pytest.fixture(scope="module")
async def baseline():
    return await comparison.run()


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


async def test_all_cases_equal_with_bytes_and_calls(baseline):
    s = baseline["summary"]
    assert (s["cases"], s["casesEqual"], s["unfriendly"], s["unfriendlyAgreeing"]) == (6, 6, 11, 11)
    assert (s["inputs"], s["inputsEqual"]) == (17, 17) and baseline["study"]["file"] == "where-is-my-order.toml"
    rows = {r["label"]: r for r in baseline["cases"]}
    # The article's ORD-1004: get_order, one payment, two reservations, one tracking: five calls against one.
    partial = rows["partial delivery"]
    assert (partial["granular"]["calls"], partial["focused"]["calls"]) == (5, 1)
    assert [c["tool"] for c in partial["granular"]["toolCalls"]] == [
        "get_order",
        "get_payment",
        "get_reservation",
        "get_reservation",
        "get_tracking",
    ]
    # The focused answer is the same records plus a small envelope: a little larger, never smaller.
    for row in baseline["cases"]:
        if row["outcome"] == "evidence":
            assert (
                0 < row["focused"]["bytes"] - row["granular"]["bytes"] < 200 or row["label"] == "linked records missing"
            )
    assert rows["payment not captured"]["granular"]["calls"] == 3  # no tracking to follow
    assert rows["well formed, no record"]["granular"]["error"] == "Order ORD-9999 was not found."
    assert rows["very long"]["input"].endswith("(5004 characters)")
    assert rows["linked records missing"]["outcome"] == "evidence"
    assert comparison.check_equal(baseline) == (
        "Checked: all 17 inputs (6 cases and 11 unfriendly) give equal evidence in every design, or are refused alike."
    )


async def test_a_planted_difference_fails_the_comparison(tmp_path):
    for f in DEFAULT_FIXTURES.glob("*.json"):
        shutil.copy(f, tmp_path / f.name)
    tracking = json.loads((tmp_path / "tracking.json").read_text())
    tracking["records"][2]["status"] = "in_transit"  # TRK-1004-A, seen only by the focused server
    (tmp_path / "tracking.json").write_text(json.dumps(tracking))
    result = await comparison.run(
        ["ORD-1004", "ORD-1001"], unfriendly=False, env={"focused": {"WISMO_FIXTURES": str(tmp_path)}}
    )
    rows = {r["label"]: r for r in result["cases"]}
    assert rows["delivered on time"]["equal"]
    assert rows["partial delivery"]["differences"] == [
        {"path": "tracking[0].status", "granular": "delivered", "focused": "in_transit"}
    ]
    assert not result["summary"]["allEqual"]
    with pytest.raises(
        ClaimFailed,
        match=r'partial delivery .*at tracking\[0\]\.status, granular has "delivered" and focused "in_transit"',
    ):
        comparison.check_equal(result)


async def test_differently_worded_rejections_count_as_differences(tmp_path):
    for f in DEFAULT_FIXTURES.glob("*.json"):
        shutil.copy(f, tmp_path / f.name)
    orders = json.loads((tmp_path / "orders.json").read_text())
    orders["records"] = [r for r in orders["records"] if r["orderId"] != "ORD-1002"]
    (tmp_path / "orders.json").write_text(json.dumps(orders))
    result = await comparison.run(["ORD-1002"], unfriendly=False, env={"focused": {"WISMO_FIXTURES": str(tmp_path)}})
    (row,) = result["cases"]
    assert row["outcome"] == "rejected differently" and not row["equal"]
    assert row["differences"][0]["focused"] == "Order ORD-1002 was not found."


async def test_output_is_byte_identical_apart_from_timings(baseline, tmp_path):
    second = await comparison.run()
    first_path = comparison.write(baseline, tmp_path / "a.json")
    second_path = comparison.write(second, tmp_path / "b.json")
    a, b = json.loads(first_path.read_text()), json.loads(second_path.read_text())
    assert stable(without_timings(a)) == stable(without_timings(b))
    assert a["timings"]["unit"] == "ms, measured" and set(a["timings"]["cases"]) == {r["label"] for r in a["cases"]}
    # Sorted keys at every level, so the file itself is stable.
    assert first_path.read_text() == stable(a)


async def test_every_call_is_recorded_with_its_arguments(baseline):
    rows = {r["label"]: r for r in baseline["cases"]}
    calls = rows["partial delivery"]["granular"]["toolCalls"]
    assert [c["arguments"] for c in calls] == [
        {"orderId": "ORD-1004"},
        {"paymentId": "PAY-1004"},
        {"reservationId": "RSV-1004-A"},
        {"reservationId": "RSV-1004-B"},
        {"trackingId": "TRK-1004-A"},
    ]
    assert sum(c["bytes"] for c in calls) == rows["partial delivery"]["granular"]["bytes"]
    assert rows["very long"]["focused"]["toolCalls"][0]["arguments"] == {"orderId": "ORD-99999999… (5004 characters)"}
