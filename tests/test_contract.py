"""The pinned tools/list contract and wire names: what every design's server lists, over stdio from the suite's
forked servers (the same server code; the transports' own tests start the real interpreter)."""

import copy

import pytest

from wismo.mcp.client import contract
from wismo.mcp.servers import designs

pytestmark = pytest.mark.anyio


async def test_the_pinned_contract_holds():
    now = await contract.current()
    diff = contract.drift(contract.pinned(), now)
    assert diff == "", (
        f"the servers drifted from data/contracts/tools.json (run `wismo contract --update` if intended):\n{diff}"
    )
    assert now == await contract.current(), "tools/list must come back in the same order every time"


def test_drift_is_shown_as_a_readable_diff():
    changed = copy.deepcopy(contract.pinned())
    changed["designs"]["granular"][0]["inputSchema"]["properties"]["orderId"]["type"] = "integer"
    diff = contract.drift(contract.pinned(), changed)
    assert '-              "type": "string"' in diff and '+              "type": "integer"' in diff


def test_wire_names_are_snake_case_and_match_what_the_client_allows():
    pinned = contract.pinned()["designs"]
    # The names the scripted model and the loop call must be names the servers report.
    for design in designs.names(contract=True):
        assert contract.wire_name_problems(pinned[design], designs.get(design).investigation.tools()) == []
    bad = [{"name": "GetActivityByDate"}, {"name": "get_order"}, {"name": "get_order"}]
    assert contract.wire_name_problems(bad, {"get_activity_by_date"}) == [
        "tool name 'GetActivityByDate' is not snake_case",
        "tool name 'get_order' appears 2 times",
        "the client allows 'get_activity_by_date', which the server does not report",
    ]
