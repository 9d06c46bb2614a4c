"""The token accounting of our own servers, and `wismo tokens` against a real server."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from wismo.accounting import cost
from wismo.reports import context_cost
from wismo.studies.declaration import article
from wismo.studies.investigations import record

pytestmark = pytest.mark.anyio
WISMO = str(Path(sys.executable).parent / "wismo")


async def test_both_investigations_over_mcp_and_their_accounting():
    recorded = await record(article(), ["ORD-1004", "ORD-1003"])
    granular = recorded["turns"]["granular"]["ORD-1004"]
    assert [[c["name"] for c in t] for t in granular] == [
        ["get_order"],
        ["get_payment", "get_reservation", "get_reservation", "get_tracking"],
    ]
    assert [[c["name"] for c in t] for t in recorded["turns"]["focused"]["ORD-1004"]] == [["get_order_support_context"]]
    rows = context_cost.our_servers(recorded, "orderId")
    by = {(r["design"], r["orderId"]): r for r in rows}
    g, f = by[("granular", "ORD-1004")], by[("focused", "ORD-1004")]
    assert (g["modelCalls"], f["modelCalls"], g["toolCalls"], f["toolCalls"]) == (3, 2, 5, 1)
    # Four tool definitions cost more than one, and every later call carries the earlier ones.
    assert g["toolDefinitions"] > f["toolDefinitions"] and g["base"] > f["base"]
    assert g["inputs"] == list(cost.session(g["base"], g["additions"]).inputs)
    assert f["total"] < g["total"]
    # The focused single result is bigger than any granular one, yet the session is cheaper.
    assert f["meanResultTokens"] > g["meanResultTokens"]
    ratio = {r["orderId"]: r for r in context_cost.ratios(rows, "orderId", "granular")}
    assert ratio["ORD-1004"]["ratio"] == round(g["total"] / f["total"], 3)


@pytest.mark.slow
def test_wismo_tokens_measures_any_stdio_server():
    done = subprocess.run(
        [WISMO, "tokens", "--json", "--", WISMO, "serve", "granular"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    counts = json.loads(done.stdout)
    assert [t["name"] for t in counts["tools"]] == ["get_order", "get_payment", "get_reservation", "get_tracking"]
    whole = counts["definitions"]
    assert whole["cookbook"]["total"] == sum(t["cookbook"]["total"] for t in counts["tools"]) + 12
    assert whole["harmony"]["total"] == sum(t["harmony"]["total"] for t in counts["tools"]) + whole["harmony"]["frame"]
    assert whole["harmony"]["label"] == "tiktoken-estimated"
    # Our servers declare no instructions, prompts or resources: they cost nothing beyond the definitions.
    assert (
        not counts["instructions"]["present"]
        and not counts["prompts"]["declared"]
        and not counts["resources"]["declared"]
    )
    missing = subprocess.run([WISMO, "tokens", "--", "/nonexistent/server"], capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and missing.stderr == (
        "wismo tokens: cannot start '/nonexistent/server': no command '/nonexistent/server' is here or on PATH\n"
    )
