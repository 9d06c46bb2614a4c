"""tiktoken encodings load from installed files only, and the counting method is applied as documented."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from wismo.accounting import tokens
from wismo.accounting.tokens import encodings


def test_encodings_load_with_no_network_and_no_cache(tmp_path):
    # A fresh interpreter with an empty tiktoken cache, sockets disabled and tiktoken's downloader booby-trapped:
    # any download attempt fails the test.
    script = textwrap.dedent("""
        import socket, tiktoken.load
        def refuse(*a, **k):
            raise AssertionError("network access attempted")
        socket.socket.connect = refuse
        socket.create_connection = refuse
        tiktoken.load.read_file = refuse
        tiktoken.load.read_file_cached = refuse
        from wismo.accounting import tokens
        o = tokens.encoding("o200k_base"); c = tokens.encoding("cl100k_base")
        print(o.name, o.n_vocab, len(o.encode("hello world")), c.name, c.n_vocab)
    """)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TIKTOKEN_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["o200k_base", "200019", "2", "cl100k_base", "100277"]
    assert not (tmp_path / "cache").exists()


def test_a_missing_package_file_says_what_to_do(monkeypatch):
    monkeypatch.setattr(encodings, "_package_data_dir", lambda: Path("/nonexistent/bpe_openai/data"))
    tokens.encoding.cache_clear()
    try:
        with pytest.raises(
            tokens.OfflineEncodingError,
            match=r"o200k_base.tiktoken.gz not found in the bpe-openai package.*never downloads",
        ):
            tokens.encoding("o200k_base")
    finally:
        tokens.encoding.cache_clear()


def test_a_file_that_does_not_match_tiktokens_hash_is_refused(monkeypatch):
    real = encodings._packaged_bytes("cl100k_base")
    monkeypatch.setattr(encodings, "_packaged_bytes", lambda name: real.replace(b" 100", b" 101", 1))
    tokens.encoding.cache_clear()
    try:
        with pytest.raises(
            tokens.OfflineEncodingError,
            match="but tiktoken expects 223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        ):
            tokens.encoding("cl100k_base")
    finally:
        tokens.encoding.cache_clear()


def test_unknown_encoding_is_named():
    with pytest.raises(tokens.OfflineEncodingError, match="'p50k_base' is not available offline"):
        tokens.encoding("p50k_base")


def test_models_map_to_o200k():
    assert tokens.encoding_for_model("gpt-4.1-mini-2025-04-14") == "o200k_base"
    assert tokens.encoding_for_model("gpt-4o") == "o200k_base"


MCP_GET_ORDER = {
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


def test_tool_conversion_is_the_articles_and_keeps_the_schema_byte_for_byte():
    fn = tokens.mcp_tool_to_function(MCP_GET_ORDER)
    assert list(fn) == ["type", "name", "description", "parameters", "strict"]
    assert (fn["type"], fn["strict"], fn["description"]) == ("function", False, MCP_GET_ORDER["description"])
    assert json.dumps(fn["parameters"]) == json.dumps(MCP_GET_ORDER["inputSchema"])
    assert "annotations" not in fn


def test_function_tokens_follow_the_cookbook_formula():
    fn = tokens.mcp_tool_to_function(MCP_GET_ORDER)
    text = tokens.count_text
    expected = (
        7
        + text("get_order:" + MCP_GET_ORDER["description"][:-1])
        + 3
        + 3
        + text("orderId:string:The order ID, for example ORD-1001")
    )
    assert tokens.count_function(fn) == expected
    assert tokens.count_tools([fn]) == expected + 12
    assert tokens.count_tools([]) == 0
    enum_fn = {
        "name": "f",
        "description": "d",
        "parameters": {"properties": {"k": {"type": "string", "description": "x", "enum": ["a", "b"]}}},
    }
    assert tokens.count_function(enum_fn) == 7 + text("f:d") + 3 + 3 + (-3 + 3 + text("a") + 3 + text("b")) + text(
        "k:string:x"
    )


def test_request_counts_every_item():
    items = [
        {"type": "message", "role": "user", "content": "Where is ORD-1004?"},
        tokens.function_call("get_order", {"orderId": "ORD-1004"}, "call_1"),
        tokens.function_call_output("call_1", '{"orderId":"ORD-1004"}'),
    ]
    count = tokens.count_request("Be brief.", [], items)
    text = tokens.count_text
    assert count.items == (3 + text("system") + text("Be brief.")) + (3 + text("user") + text("Where is ORD-1004?")) + (
        3 + text("get_order") + text('{"orderId":"ORD-1004"}')
    ) + (3 + text('{"orderId":"ORD-1004"}'))
    assert count.total == count.items + 3 and count.tools == 0
    with pytest.raises(ValueError, match="reasoning"):
        tokens.count_item({"type": "reasoning"})
