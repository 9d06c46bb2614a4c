"""The dataset, identifier checks and the support-context aggregation, in process."""

import json
import shutil

import pytest

from wismo import domain
from wismo.core.paths import DEFAULT_FIXTURES
from wismo.domain import ORDER, PAYMENT, RESERVATION, TRACKING, InvalidIdentifier, RecordNotFound


@pytest.fixture(scope="module")
def ds():
    return domain.load()


def test_six_cases_and_the_article_records(ds):
    assert ds.ids(ORDER)[:6] == [f"ORD-100{i}" for i in range(1, 7)]
    order = ds.get(ORDER, "ORD-1004")
    # The article's ORD-1004, value for value.
    assert order == {
        "orderId": "ORD-1004",
        "status": "partially_shipped",
        "promisedDeliveryDate": "2026-10-07",
        "updatedAt": "2026-10-06T15:00:00+00:00",
        "items": [{"sku": "LAPTOP-14", "quantity": 1}, {"sku": "MONITOR-27", "quantity": 1}],
        "paymentId": "PAY-1004",
        "reservationIds": ["RSV-1004-A", "RSV-1004-B"],
        "trackingIds": ["TRK-1004-A"],
    }
    assert ds.get(TRACKING, "TRK-1005-A") == {
        "trackingId": "TRK-1005-A",
        "orderId": "ORD-1005",
        "sku": "HEADSET-USB",
        "quantity": 2,
        "availability": "unavailable",
        "status": None,
        "latestEvent": None,
        "estimatedDeliveryDate": None,
        "updatedAt": None,
        "checkedAt": "2026-10-08T12:00:00+00:00",
    }
    assert ds.get(RESERVATION, "RSV-1004-B")["status"] == "backordered"
    assert ds.get(PAYMENT, "PAY-1003")["status"] == "pending"
    assert ds.get(ORDER, "ORD-1003")["trackingIds"] == []


def test_status_lag_keeps_both_observations(ds):
    order, tracking = ds.get(ORDER, "ORD-1006"), ds.get(TRACKING, "TRK-1006-A")
    assert (order["status"], order["updatedAt"][:10]) == ("shipped", "2026-10-06")
    assert (tracking["status"], tracking["updatedAt"][:10]) == ("delivered", "2026-10-07")


@pytest.mark.parametrize(
    "value, message",
    [
        (None, "orderId is required; give an order ID such as ORD-1001."),
        ("", "orderId is empty; give an order ID such as ORD-1001."),
        (1004, "orderId must be a string such as ORD-1001, not a number."),
        (True, "orderId must be a string such as ORD-1001, not a boolean."),
        (["ORD-1004"], "orderId must be a string such as ORD-1001, not an array."),
        ("PAY-1004", 'orderId "PAY-1004" is not an order ID; order IDs look like ORD-1001.'),
        ("ORD-10\n04", 'orderId "ORD-10\\n04" is not an order ID; order IDs look like ORD-1001.'),
        ("O" * 65, "orderId is 65 characters long, too long for an order ID such as ORD-1001."),
    ],
)
def test_bad_identifiers_get_one_sentence(ds, value, message):
    with pytest.raises(InvalidIdentifier) as err:
        ds.get(ORDER, value)
    assert err.value.message == message
    assert message.count(". ") == 0 and message.endswith(".")


def test_well_formed_but_absent(ds):
    with pytest.raises(RecordNotFound, match=r"^Order ORD-9999 was not found\.$"):
        ds.get(ORDER, "ORD-9999")
    with pytest.raises(RecordNotFound, match=r"^Reservation RSV-1004-C was not found\.$"):
        ds.get(RESERVATION, "RSV-1004-C")


def test_support_context_is_the_linked_records(ds):
    ctx = domain.support_context(ds, "ORD-1004")
    assert list(ctx) == ["order", "payment", "reservations", "tracking"]
    assert ctx["payment"] is ds.get(PAYMENT, "PAY-1004")
    assert [r["reservationId"] for r in ctx["reservations"]] == ["RSV-1004-A", "RSV-1004-B"]
    assert [t["trackingId"] for t in ctx["tracking"]] == ["TRK-1004-A"]
    # Unavailable tracking stays an explicit record.
    assert domain.support_context(ds, "ORD-1005")["tracking"][0]["availability"] == "unavailable"


def test_missing_linked_records_are_reported_not_dropped(ds):
    ctx = domain.support_context(ds, "ORD-1007")
    assert ctx["payment"] == {"paymentId": "PAY-1007", "missing": True, "error": "Payment PAY-1007 was not found."}
    assert ctx["tracking"] == [
        {"trackingId": "TRK-1007-A", "missing": True, "error": "Tracking TRK-1007-A was not found."}
    ]
    assert ctx["reservations"][0]["reservationId"] == "RSV-1007-A"


def test_expectations_never_reach_the_dataset(ds):
    expectations = json.loads((DEFAULT_FIXTURES / "expectations.json").read_text())
    assert set(expectations["cases"]) == set(ds.ids(ORDER)[:6])
    served = json.dumps([domain.support_context(ds, o) for o in ds.ids(ORDER)])
    for key in ("deliveredSkus", "outstandingSkus", "delayReasons", "missingEvidence", "stock_shortage"):
        assert key not in served


def test_inconsistent_fixtures_are_named(tmp_path):
    for f in DEFAULT_FIXTURES.glob("*.json"):
        shutil.copy(f, tmp_path / f.name)
    payments = json.loads((tmp_path / "payments.json").read_text())
    payments["records"][3]["orderId"] = "ORD-1001"  # PAY-1004 now claims another order
    (tmp_path / "payments.json").write_text(json.dumps(payments))
    with pytest.raises(domain.DatasetError, match="payment PAY-1004 is linked from ORD-1004 but belongs to ORD-1001"):
        domain.load(tmp_path)
    (tmp_path / "tracking.json").unlink()
    with pytest.raises(domain.DatasetError, match="tracking.json is missing"):
        domain.load(tmp_path)
