"""Call strategies on our servers' real results: ORD-1004: 3 granular requests in parallel, 6 one at a time."""

import anyio
import pytest

from wismo.reports import context_price, price_checks
from wismo.reports.analyses import strategy
from wismo.runs.agent.scripted import answer
from wismo.studies.declaration import article
from wismo.studies.investigations import record


@pytest.fixture(scope="module")
def recorded():
    return anyio.run(record, article(), ["ORD-1004"])


def test_request_counts_for_ord_1004(recorded):
    granular, focused = recorded["turns"]["granular"]["ORD-1004"], recorded["turns"]["focused"]["ORD-1004"]
    assert [len(t) for t in granular] == [1, 4]  # get_order, then payment, reservations and tracking at once
    assert strategy.requests(granular, "parallel") == 3
    assert strategy.requests(granular, "sequential") == 6
    assert strategy.requests(focused, "parallel") == strategy.requests(focused, "sequential") == 2
    arranged = strategy.arrange(granular, "sequential")
    assert [c["name"] for t in arranged for c in t] == [c["name"] for t in granular for c in t]
    with pytest.raises(ValueError, match="unknown call strategy 'serial'; choose parallel or sequential"):
        strategy.arrange(granular, "serial")


def test_sequential_calls_resend_more_and_write_the_same(recorded):
    study = article()
    answers = {d: answer(study.designs[d].investigation, recorded["turns"][d]["ORD-1004"]) for d in study.designs}
    convs = context_price.conversations(recorded, "ORD-1004", "o200k_base", "python", "orderId", answers)
    by = {(c["design"], c["strategy"]): c for c in convs}
    g_par, g_seq = by[("granular", "parallel")], by[("granular", "sequential")]
    assert len(g_par["outputs"]) == 3 and len(g_seq["outputs"]) == 6
    assert sum(g_par["outputs"]) == sum(g_seq["outputs"])  # the same calls and the same answer, in more requests
    assert g_seq["totalInput"] > g_par["totalInput"] and g_seq["inputs"][0] == g_par["inputs"][0]
    saving = context_price.savings(convs, "totalInput", "granular")[0]
    assert saving["sequential %"] > saving["parallel %"] > 0
    result = {
        "conversations": convs,
        "scaleRows": [],
        "pricing": {"case": "ORD-1004"},
        "study": {"reference": "granular"},
    }
    assert "3 requests in parallel, 6 one call per request" in price_checks.check_strategy(result)
    g_seq["requests"] = 5
    with pytest.raises(AssertionError, match="granular ORD-1004: 5 requests for 5 calls"):
        price_checks.check_strategy(result)
