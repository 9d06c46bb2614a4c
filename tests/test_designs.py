"""The design registry: every design declared once, and a fourth design registered from a file works everywhere."""

import json
import subprocess
import sys
import textwrap

import matplotlib.colors
import matplotlib.pyplot as plt
import pytest

from article import converse
from wismo import runs
from wismo.mcp.client.connection import connect
from wismo.mcp.servers import designs
from wismo.reports import context_cost
from wismo.reports.analyses import comparison, sweep
from wismo.reports.render import charts
from wismo.runs.agent.scripted import ScriptedBackend
from wismo.studies.declaration import article
from wismo.studies.investigations import record

pytestmark = pytest.mark.anyio

TOY = textwrap.dedent('''
    """A toy fourth design for the tests: the focused context under another tool name."""
    from wismo.mcp.servers.designs import Design, Investigation
    from wismo.domain import ORDER, support_context
    from wismo.mcp.servers.toolspec import ToolSpec

    TOOLS = (ToolSpec(name="get_whole_order", description="Everything about one order in one call.", kind=ORDER,
                      argument_description="The order ID, for example ORD-1001.", run=support_context),)
    DESIGN = Design(name="toy", summary="the focused context under another name", color="#D55E00",
                    investigation=Investigation(entry="get_whole_order"), server=lambda: TOOLS, contract=False)
''')


@pytest.fixture
def toy(tmp_path, monkeypatch):
    path = tmp_path / "toy_design.py"
    path.write_text(TOY)
    monkeypatch.setenv(designs.ENV, str(path))
    return path


def test_built_in_designs_are_declared_once():
    assert designs.names() == ("granular", "focused", "scoped")
    assert designs.article() == ("granular", "focused")
    assert designs.names(compared=True) == ("granular", "focused")
    assert designs.names(contract=True) == ("granular", "focused", "scoped")
    assert {t.name for t in designs.get("granular").tools()} == designs.get("granular").investigation.tools()
    assert len(set(designs.colors().values())) == 3
    with pytest.raises(designs.UnknownDesign, match="choose one of granular, focused, scoped"):
        designs.get("nope")


def test_the_scripted_model_tells_designs_apart_by_their_tools():
    assert designs.for_tools({"get_order", "get_payment", "get_reservation", "get_tracking"}).name == "granular"
    assert designs.for_tools({"get_order"}).name == "granular"  # a tool cap may offer only the entry tool
    assert designs.for_tools({"get_order_support_context"}).name == "focused"
    assert designs.for_tools({"something_else"}) is None
    how = designs.get("granular").investigation
    # A link follows every value its expression finds but null (the rule: nulls are skipped), each as it is.
    assert how.linked_calls(
        {"paymentId": "PAY-1", "reservationIds": ["RSV-1-A", 7, None, True], "trackingIds": []}, {}
    ) == [
        ("get_payment", {"paymentId": "PAY-1"}),
        ("get_reservation", {"reservationId": "RSV-1-A"}),
        ("get_reservation", {"reservationId": 7}),
        ("get_reservation", {"reservationId": True}),
    ]
    assert how.linked_calls({"paymentId": None}, {}) == []  # a null link: nothing to follow


def test_a_broken_registration_says_what_is_wrong(tmp_path, monkeypatch):
    bad = tmp_path / "bad.py"
    bad.write_text("X = 1\n")
    monkeypatch.setenv(designs.ENV, str(bad))
    with pytest.raises(designs.UnknownDesign, match="defines no DESIGN"):
        designs.registered()
    monkeypatch.setenv(designs.ENV, str(tmp_path / "missing.py"))
    with pytest.raises(designs.UnknownDesign, match="not a readable Python file"):
        designs.registered()


@pytest.mark.slow
async def test_a_registered_fourth_design_works_everywhere_with_no_other_edit(toy):
    assert designs.names()[-1] == "toy"
    # Served from its own process, with the same CLI as the built-in designs.
    done = subprocess.run([sys.executable, "-m", "wismo", "serve", "--help"], capture_output=True, text=True)
    assert "toy" in done.stdout
    # Compared with the reference design, case by case, once named (a design wismo serves, for any study).
    result = await comparison.run(["ORD-1004", "ORD-1005"], unfriendly=False, design_names=["focused", "toy"])
    assert result["summary"]["designs"] == ["granular", "focused", "toy"]
    assert result["summary"]["allEqual"], result["cases"]
    assert result["summary"]["calls"]["toy"] == 2 and result["tools"]["toy"][0]["name"] == "get_whole_order"
    # Counted: the token accounting of its real definitions and results.
    recorded = await record(article().narrowed(["toy"]), ["ORD-1004"])
    rows = context_cost.our_servers(recorded, "orderId")
    toy_row = next(r for r in rows if r["design"] == "toy")
    assert toy_row["modelCalls"] == 2 and toy_row["toolCalls"] == 1 and toy_row["total"] > toy_row["base"] > 0
    # Driven by the scale report over a generated order.
    scale_rows, _ = await sweep.measure([1])
    assert {r["design"] for r in scale_rows} == {"granular", "focused", "scoped", "toy"}
    # Charted in its own colour.
    fig = charts.bytes_per_case(result)
    used = {matplotlib.colors.to_hex(p.get_facecolor()[:3]) for ax in fig.axes for p in ax.patches}
    plt.close(fig)
    assert charts.DESIGN_COLORS["toy"].lower() in used
    # Followed by the scripted model, and accepted by the run format.
    async with connect("toy") as conn:
        tools = await conn.list_tools()
        trace = await converse(ScriptedBackend(), conn, tools, "ORD-1004")
    assert trace["outcome"] == "answered" and [c["name"] for c in trace["toolCalls"]] == ["get_whole_order"]
    assert "toy" in runs.schema("manifest")["properties"]["design"]["enum"]
    assert json.loads(trace["answerText"])["outstandingSkus"] == ["MONITOR-27"]
