"""The order's link graph, declared once in domain/links.py: every place that follows the links derives them, so a
link added to a copy of the graph shows up in the dataset check, the focused context, the pages' lists, the
evidence and the granular design's follow-up calls."""

import copy

import pytest

from wismo.domain import ORDER, PAYMENT, RESERVATION, TRACKING, Kind, load, support_context
from wismo.domain.dataset import DatasetError, check_links
from wismo.domain.links import LINKS, Link, context_keys, kind_of, kinds, paged_lists
from wismo.domain.pages import LISTS, concise_view, merge
from wismo.mcp.servers import designs, granular
from wismo.mcp.servers.toolspec import ToolSpec
from wismo.runs.agent.evidence import Evidence

INVOICE = Kind("invoice", "invoiceId", r"INV-[0-9]{4,10}", "INV-1004")
WITH_INVOICES = (*LINKS, Link("invoiceIds", INVOICE, many=True, into="invoices"))
GET_INVOICE = ToolSpec(
    name="get_invoice",
    description="Get one invoice.",
    kind=INVOICE,
    argument_description="An invoice ID, for example INV-1004.",
    run=lambda dataset, ident: dataset.get(INVOICE, ident),
)


@pytest.fixture(scope="module")
def invoiced():
    """The fixtures with one invoice kind more: ORD-1004 links INV-1004 (its own) and INV-9999 (not on file)."""
    dataset = copy.deepcopy(load())
    dataset.records[ORDER]["ORD-1004"]["invoiceIds"] = ["INV-1004", "INV-9999"]
    for order in dataset.records[ORDER].values():
        order.setdefault("invoiceIds", [])
    dataset.records[INVOICE] = {"INV-1004": {"invoiceId": "INV-1004", "orderId": "ORD-1004", "total": "1899.00"}}
    return dataset


def test_the_granular_follow_up_calls_come_from_the_graph_and_the_tools_kinds():
    how = designs.get("granular").investigation
    assert how == designs.following_links(granular.TOOLS)
    assert how.entry == "get_order"
    assert [(f.key, f.tool, f.arguments, f.into) for f in how.links] == [
        ("paymentId", "get_payment", {"paymentId": "{item}"}, "payment"),
        ("reservationIds", "get_reservation", {"reservationId": "{item}"}, "reservations"),
        ("trackingIds", "get_tracking", {"trackingId": "{item}"}, "tracking"),
    ]


def test_the_focused_context_pages_and_evidence_follow_the_graph_in_its_order():
    assert kinds() == (ORDER, PAYMENT, RESERVATION, TRACKING)
    assert context_keys() == ("order", "payment", "reservations", "tracking")
    assert tuple(support_context(load(), "ORD-1004")) == context_keys()
    assert LISTS == (
        ("order", "items"),
        ("order", "reservationIds"),
        ("order", "trackingIds"),
        ("reservations", None),
        ("tracking", None),
    )
    assert list(Evidence().records) == ["order", "payment", "reservation", "tracking"]


def test_every_fixture_record_is_told_by_its_kind():
    dataset = load()
    for kind in kinds():
        assert {kind_of(r) for r in dataset.records[kind].values()} == {kind}
    # An order holds its payment's identifier as a link: its items tell it apart from the payment.
    assert kind_of({"orderId": "ORD-1", "paymentId": "PAY-1", "items": []}) is ORDER
    assert kind_of({"orderId": "ORD-1", "paymentId": "PAY-1", "amount": "1.00"}) is PAYMENT
    assert kind_of({"orderId": "ORD-1"}) is None


def test_a_link_added_to_the_graph_reaches_the_granular_design(invoiced):
    how = designs.following_links((*granular.TOOLS, GET_INVOICE), WITH_INVOICES)
    assert how.links[-1] == designs.FollowUp.passing("invoiceIds", "get_invoice", "invoiceId", "invoices")
    order = invoiced.records[ORDER]["ORD-1004"]
    assert how.linked_calls(order, {})[-2:] == [
        ("get_invoice", {"invoiceId": "INV-1004"}),
        ("get_invoice", {"invoiceId": "INV-9999"}),
    ]
    with pytest.raises(designs.DesignError, match="serve no invoice records"):
        designs.following_links(granular.TOOLS, WITH_INVOICES)


def test_a_link_added_to_the_graph_reaches_the_dataset_check(invoiced):
    check_links(invoiced, WITH_INVOICES)
    broken = copy.deepcopy(invoiced)
    broken.records[INVOICE]["INV-1004"]["orderId"] = "ORD-1001"
    with pytest.raises(DatasetError, match="invoice INV-1004 is linked from ORD-1004 but belongs to ORD-1001"):
        check_links(broken, WITH_INVOICES)
    check_links(broken)  # the graph without the link does not look at invoices


def test_a_link_added_to_the_graph_reaches_the_context_pages_and_evidence(invoiced):
    context = support_context(invoiced, "ORD-1004", links=WITH_INVOICES)
    assert tuple(context) == ("order", "payment", "reservations", "tracking", "invoices")
    assert context["invoices"][0]["total"] == "1899.00"
    assert context["invoices"][1] == {
        "invoiceId": "INV-9999",
        "missing": True,
        "error": "Invoice INV-9999 was not found.",
    }

    lists = paged_lists(WITH_INVOICES)
    assert ("order", "invoiceIds") in lists and lists[-1] == ("invoices", None)
    halves = [
        {**context, "order": {**context["order"], "invoiceIds": ["INV-1004"]}, "invoices": context["invoices"][:1]},
        {
            "order": {"invoiceIds": ["INV-9999"], "items": [], "reservationIds": [], "trackingIds": []},
            "reservations": [],
            "tracking": [],
            "invoices": context["invoices"][1:],
        },
    ]
    halves[0]["order"]["items"] = context["order"]["items"]
    merged = merge(halves, WITH_INVOICES)
    assert merged["invoices"] == context["invoices"] and merged["order"]["invoiceIds"] == ["INV-1004", "INV-9999"]
    assert tuple(concise_view(context, WITH_INVOICES)) == tuple(context)

    evidence = Evidence(links=WITH_INVOICES)
    evidence.add(context)
    assert [r["invoiceId"] for r in evidence.records["invoice"]] == ["INV-1004"]
    assert evidence.unreadable == ["INV-9999"]
    assert len(evidence.orders) == 1 and len(evidence.tracking) == len(context["tracking"])
