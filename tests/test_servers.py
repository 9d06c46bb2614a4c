"""Both servers: what their tools list and answer to good and bad calls (the SDK's server object reached in process,
tests/inmemory.py), and as separate processes over stdio what goes over the wire, from any directory, and the pinned
revision."""

import json
import re
import subprocess
import sys

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from inmemory import served
from rawmcp import WISMO, RawServer
from wismo import domain
from wismo.mcp.client.connection import HarnessError, connect
from wismo.mcp.servers.protocol import PINNED_REVISION

ARTICLE_GET_ORDER = {
    "name": "get_order",
    "description": "Get one order's status, promised delivery date, item quantities and linked payment, reservation "
    "and tracking IDs. Follow those IDs with the other tools for payment, warehouse and carrier "
    "evidence. Order status may lag carrier updates.",
    "inputSchema": {
        "type": "object",
        "properties": {"orderId": {"description": "The order ID, for example ORD-1001.", "type": "string"}},
        "required": ["orderId"],
    },
    "annotations": {"openWorldHint": False, "readOnlyHint": True},
}

pytestmark = pytest.mark.anyio


async def test_granular_tools_list_is_the_articles():
    async with served("granular") as conn:
        tools = await conn.list_tools()
    assert [t["name"] for t in tools] == ["get_order", "get_payment", "get_reservation", "get_tracking"]
    assert tools[0] == ARTICLE_GET_ORDER
    arguments = {"get_payment": "paymentId", "get_reservation": "reservationId", "get_tracking": "trackingId"}
    for tool in tools[1:]:
        assert set(tool) == {"name", "description", "inputSchema", "annotations"}, "no outputSchema, nothing extra"
        assert tool["inputSchema"]["required"] == [arguments[tool["name"]]]
        assert tool["inputSchema"]["properties"][arguments[tool["name"]]]["description"]
        assert tool["annotations"] == {"openWorldHint": False, "readOnlyHint": True}
    assert all(re.fullmatch(r"[a-z]+(_[a-z]+)*", t["name"]) for t in tools)


async def test_focused_tools_list():
    async with served("focused") as conn:
        tools = await conn.list_tools()
    assert [t["name"] for t in tools] == ["get_order_support_context"]
    assert tools[0]["inputSchema"] == ARTICLE_GET_ORDER["inputSchema"]
    assert tools[0]["annotations"] == {"openWorldHint": False, "readOnlyHint": True}


async def test_granular_tools_good_and_bad_input_and_the_server_keeps_serving():
    ds = domain.load()
    good = {
        "get_order": ("orderId", "ORD-1004", ds.get(domain.ORDER, "ORD-1004")),
        "get_payment": ("paymentId", "PAY-1003", ds.get(domain.PAYMENT, "PAY-1003")),
        "get_reservation": ("reservationId", "RSV-1004-B", ds.get(domain.RESERVATION, "RSV-1004-B")),
        "get_tracking": ("trackingId", "TRK-1005-A", ds.get(domain.TRACKING, "TRK-1005-A")),
    }
    async with served("granular") as conn:
        for tool, (arg, ident, record) in good.items():
            result = await conn.call(tool, {arg: ident})
            assert not result.is_error and json.loads(result.text) == record
            # Key order is the record's, compact: exactly one serialization to count bytes on.
            assert result.text == json.dumps(record, separators=(",", ":"), ensure_ascii=False)
            for bad in ({arg: ""}, {arg: 7}, {}, {arg: ident + "X" * 80}, {arg: "ORD-0000-Z"}, {arg: None}):
                rejected = await conn.call(tool, bad)
                assert rejected.is_error, (tool, bad)
                assert rejected.text.endswith(".") and "\n" not in rejected.text and arg in rejected.text
                again = await conn.call(tool, {arg: ident})
                assert not again.is_error
        missing = await conn.call("get_tracking", {"trackingId": "TRK-1007-A"})
        assert (missing.is_error, missing.text) == (True, "Tracking TRK-1007-A was not found.")
        # Unknown extra arguments are ignored, as the schema allows.
        extra = await conn.call("get_order", {"orderId": "ORD-1001", "verbose": True})
        assert not extra.is_error
        with pytest.raises(MCPError, match="Unknown tool 'get_everything'; this server offers get_order, get_payment"):
            await conn.session.call_tool("get_everything", {})
        assert not (await conn.call("get_order", {"orderId": "ORD-1001"})).is_error


async def test_focused_tool_returns_the_context_and_rejects_bad_input():
    ds = domain.load()
    async with served("focused") as conn:
        for order_id in ds.ids(domain.ORDER):
            result = await conn.call("get_order_support_context", {"orderId": order_id})
            assert not result.is_error
            assert json.loads(result.text) == domain.support_context(ds, order_id)
        rejected = await conn.call("get_order_support_context", {"orderId": "ORD-9999"})
        assert (rejected.is_error, rejected.text) == (True, "Order ORD-9999 was not found.")


def test_one_text_block_and_no_structured_copy_on_the_wire():
    with RawServer("focused") as server:
        assert server.handshake()["result"]["protocolVersion"] == PINNED_REVISION
        answer = server.request(
            "tools/call", {"name": "get_order_support_context", "arguments": {"orderId": "ORD-1004"}}
        )
        result = answer["result"]
        assert [b["type"] for b in result["content"]] == ["text"]
        assert "structuredContent" not in result and result["isError"] is False


def test_starts_with_a_minimal_environment_from_any_directory():
    # MCP clients pass little more than PATH and HOME, and choose the working directory themselves.
    with RawServer("granular", env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}, cwd="/") as server:
        assert server.handshake()["result"]["serverInfo"]["name"] == "wismo-granular"
        answer = server.request("tools/call", {"name": "get_order", "arguments": {"orderId": "ORD-1001"}})
        assert json.loads(answer["result"]["content"][0]["text"])["orderId"] == "ORD-1001"


def test_other_revisions_are_answered_with_the_pinned_one():
    with RawServer("granular") as server:
        assert server.handshake("2025-06-18")["result"]["protocolVersion"] == PINNED_REVISION


def test_the_2026_probe_is_refused_cleanly():
    with RawServer("focused") as server:
        answer = server.request("server/discover", {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}})
        assert answer["error"]["code"] == -32022
        assert answer["error"]["data"]["supported"] == [PINNED_REVISION]
        # ... and the same connection then completes the handshake.
        assert server.handshake()["result"]["protocolVersion"] == PINNED_REVISION


async def test_the_sdk_default_client_falls_back_to_the_handshake():
    # mcp.Client in its default "auto" mode probes 2026-07-28 first; the pinned server must steer it back.
    async with Client(StdioServerParameters(command=WISMO, args=["serve", "granular"])) as client:
        assert client.session.protocol_version == PINNED_REVISION
        result = await client.call_tool("get_order", {"orderId": "ORD-1004"})
        assert json.loads(result.content[0].text)["status"] == "partially_shipped"


async def test_a_server_that_cannot_start_is_named(monkeypatch):
    with pytest.raises(HarnessError) as err:
        async with connect("nonesuch"):
            pass
    message = str(err.value)
    assert (
        "nonesuch server over stdio" in message
        and "unknown design 'nonesuch'; choose one of granular, focused" in message
    )


def test_a_stdio_server_started_as_wismo_serve_answers_the_handshake_and_a_tool_call():
    # `wismo serve` starts through the SDK's ordinary imports: nothing of its package machinery is replaced.
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": PINNED_REVISION, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "get_order", "arguments": {"orderId": "ORD-1004"}},
    }
    done = subprocess.run(
        [sys.executable, "-m", "wismo", "serve", "granular"],
        input="".join(
            json.dumps(m) + "\n" for m in (initialize, {"jsonrpc": "2.0", "method": "notifications/initialized"}, call)
        ),
        capture_output=True,
        text=True,
        timeout=120,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0 and answers[0]["result"]["protocolVersion"] == PINNED_REVISION, done.stderr[-2000:]
    assert json.loads(answers[1]["result"]["content"][0]["text"])["orderId"] == "ORD-1004"
