"""The five-field scorer and the summary check."""

from wismo.runs import scoring
from wismo.runs.agent.evidence import Evidence

EXPECTED = {
    "deliveredSkus": ["LAPTOP-14"],
    "outstandingSkus": ["MONITOR-27"],
    "delayReasons": ["stock_shortage"],
    "deliveryEstimate": None,
    "missingEvidence": [],
}


def test_a_right_answer_passes_in_any_order():
    answer = dict(EXPECTED, customerSummary="…")
    assert scoring.score(answer, EXPECTED)["passed"]
    two = {
        "deliveredSkus": ["B", "A"],
        "outstandingSkus": [],
        "delayReasons": [],
        "deliveryEstimate": "2026-10-10",
        "missingEvidence": [],
    }
    assert scoring.score(two, dict(two, deliveredSkus=["A", "B"]))["passed"]


def test_a_planted_wrong_answer_fails_and_names_the_field():
    wrong = dict(EXPECTED, outstandingSkus=[], deliveryEstimate="2026-10-07")
    result = scoring.score(wrong, EXPECTED)
    assert not result["passed"]
    assert [k for k, v in result["fields"].items() if not v["match"]] == ["outstandingSkus", "deliveryEstimate"]


def test_duplicates_are_rejected():
    result = scoring.score(dict(EXPECTED, deliveredSkus=["LAPTOP-14", "LAPTOP-14"]), EXPECTED)
    assert not result["passed"] and result["fields"]["deliveredSkus"]["reason"] == "duplicates"


def test_missing_fields_and_no_answer_fail():
    partial = {k: v for k, v in EXPECTED.items() if k != "missingEvidence"}
    assert scoring.score(partial, EXPECTED)["fields"]["missingEvidence"]["reason"] == "missing"
    assert not scoring.score(None, EXPECTED)["passed"]
    assert (
        scoring.score(dict(EXPECTED, delayReasons="stock_shortage"), EXPECTED)["fields"]["delayReasons"]["reason"]
        == "not a list of strings"
    )


def _evidence_1005():
    e = Evidence()
    e.add(
        {
            "orderId": "ORD-1005",
            "items": [{"sku": "HEADSET-USB", "quantity": 2}],
            "status": "shipped",
            "promisedDeliveryDate": "2026-10-06",
        }
    )
    e.add({"paymentId": "PAY-1005", "orderId": "ORD-1005", "status": "captured", "amount": "158.00"})
    e.add(
        {
            "trackingId": "TRK-1005-A",
            "orderId": "ORD-1005",
            "sku": "HEADSET-USB",
            "availability": "unavailable",
            "status": None,
        }
    )
    return e


def test_summary_check_flags_unsupported_claims():
    e = _evidence_1005()
    assert (
        scoring.summary_flags(
            "I cannot confirm whether HEADSET-USB has arrived; tracking TRK-1005-A is unavailable.", e
        )
        == []
    )
    # The article's weak wording: a delay the evidence does not establish.
    assert scoring.summary_flags("Your HEADSET-USB is delayed for an unknown reason.", e) == [
        "asserts a delay the evidence does not establish"
    ]
    assert scoring.summary_flags("It will arrive on 2026-10-09.", e) == ["date 2026-10-09 appears in no record"]
    assert scoring.summary_flags("Your MONITOR-27 and DOCK-USB-C are fine.", e) == [
        "SKU DOCK-USB-C appears in no record",
        "SKU MONITOR-27 appears in no record",
    ]
    assert scoring.summary_flags("Promised for 2026-10-06.", e) == []


def test_pass_hat_k():
    assert (
        scoring.pass_hat_k([True, True, True])
        and not scoring.pass_hat_k([True, False, True])
        and not scoring.pass_hat_k([])
    )


def test_expectations_cover_the_six_cases():
    assert sorted(scoring.load_expectations()) == [f"ORD-100{i}" for i in range(1, 7)]
