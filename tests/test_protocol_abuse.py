"""Protocol abuse at the JSON-RPC level: each gets a JSON-RPC error or a clean shutdown, never a hang, and
never anything but JSON-RPC on stdout. Over stdio (raw lines) and Streamable HTTP (raw POSTs)."""

import json
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from rawmcp import RawServer, rest
from wismo.mcp.client.process import free_port, server_command

# Real server processes: these tests read the server's own memory and behaviour from its pid.
pytestmark = pytest.mark.usefixtures("real_servers")

CALL = {"name": "get_order", "arguments": {"orderId": "ORD-1001"}}


def _alive(server: RawServer) -> None:
    answer = server.request("tools/call", CALL)
    assert json.loads(answer["result"]["content"][0]["text"])["orderId"] == "ORD-1001"


def test_malformed_lines_get_parse_errors_and_the_server_keeps_serving():
    with RawServer("granular") as server:
        server.handshake()
        for line in (
            "this is not json",
            '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":',
            "[1,2,3]",
            "{}",
            '"text"',
        ):
            server.send(line)
            answer = server.recv(timeout=5)
            assert (
                answer["jsonrpc"] == "2.0" and answer["id"] is None and answer["error"]["code"] in (-32700, -32600)
            ), (line, answer)
        _alive(server)


def test_unknown_methods_and_calls_before_the_handshake():
    with RawServer("focused") as server:
        early = server.request("tools/list")
        assert early["error"]["code"] == -32600 and "send initialize" in early["error"]["message"]
        server.handshake()
        unknown = server.request("foo/bar", {})
        assert unknown["error"]["code"] == -32601
        _alive_focused = server.request(
            "tools/call", {"name": "get_order_support_context", "arguments": {"orderId": "ORD-1001"}}
        )
        assert "result" in _alive_focused


def test_an_unsupported_revision_is_answered_with_the_pinned_one():
    with RawServer("granular") as server:
        assert server.handshake("1999-01-01")["result"]["protocolVersion"] == "2025-11-25"
        _alive(server)


def test_duplicate_request_ids_are_refused_not_dropped():
    with RawServer("granular") as server:
        server.handshake()
        message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": CALL}
        server.send(message)
        server.send(message)
        answers = [server.recv(timeout=5), server.recv(timeout=5)]
        assert all(a["id"] == 7 for a in answers)
        assert sum("result" in a for a in answers) >= 1
        errors = [a for a in answers if "error" in a]
        assert not errors or errors[0]["error"]["code"] == -32600
        _alive(server)


def test_a_client_that_disappears_mid_call_leaves_a_clean_exit():
    server = RawServer("granular")
    server.handshake()
    server.send({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": CALL})
    server.proc.stdin.close()
    code = server.proc.wait(10)
    stdout = rest(server.proc.stdout).decode()
    stderr = server.proc.stderr.read().decode()
    server.proc.stdout.close()
    server.proc.stderr.close()
    assert code == 0
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in stdout.splitlines() if line.strip())
    assert "Traceback" not in stderr


def test_a_request_whose_id_is_not_a_string_or_an_integer_gets_an_error_not_silence():
    # The SDK's message adapter reads such a line as a notification (the id dropped), so it went unanswered and a
    # client waiting for its answer waited forever. JSON-RPC: an invalid request is answered, with id null.
    with RawServer("granular") as server:
        server.handshake()
        for ident in ("true", "3.5", "null", "[1]", '{"a":1}', "false", "1e3"):
            server.send(f'{{"jsonrpc":"2.0","id":{ident},"method":"ping"}}')
            answer = server.recv(timeout=5)
            assert answer["id"] is None and answer["error"]["code"] == -32600, (ident, answer)
        server.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')  # a real notification: still quiet
        _alive(server)


def test_a_line_over_the_cap_is_dropped_and_answered_and_the_server_keeps_serving():
    # Uncapped, a line stayed in memory whole until its newline and parsing it cost about five times its length
    # (a 64 MB line: 370 MB); over 32 MB it is now dropped as it arrives, and answered with an error (id null).
    huge = b'{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"get_order","arguments":{"orderId":"'
    with RawServer("granular") as server:
        server.handshake()
        server.send_bytes(huge + b"A" * (40 * 2**20), 60)  # in pieces, the newline last
        server.send_bytes(b'"}}}\n', 60)
        answer = server.recv(timeout=30)
        assert answer["id"] is None and answer["error"]["code"] == -32600, answer
        assert "longer than 32 MB" in answer["error"]["message"]
        _alive(server)


@pytest.fixture
def http_server():
    port = free_port()
    proc = subprocess.Popen(server_command("granular", port), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.05)
    yield url
    proc.terminate()
    proc.wait(10)
    out = proc.stdout.read().decode()
    proc.stdout.close()
    proc.stderr.close()
    assert out.strip() == "", "an HTTP server writes nothing to stdout"


def _post(url, body, session=None):
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if session:
        headers["mcp-session-id"] = session
    data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    try:
        with urllib.request.urlopen(
            urllib.request.Request(url, data=data, headers=headers, method="POST"), timeout=10
        ) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


def _session(url, revision="2025-11-25"):
    """initialize at `revision` (answered with the pinned one) and notifications/initialized; the session id."""
    init = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "initialize",
        "params": {"protocolVersion": revision, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    }
    status, headers, body = _post(url, init)
    assert status == 200 and json.loads(body)["result"]["protocolVersion"] == "2025-11-25"
    session = headers.get("mcp-session-id")
    _post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    return session


def test_http_abuse_gets_errors_and_the_server_keeps_serving(http_server):
    status, _, body = _post(http_server, "this is not json")
    assert 400 <= status < 500 and json.loads(body)["error"]["code"] == -32700
    status, _, body = _post(http_server, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert 400 <= status < 500 and "error" in json.loads(body)
    session = _session(http_server, "1999-01-01")  # answered with the pinned revision
    status, _, body = _post(http_server, {"jsonrpc": "2.0", "id": 3, "method": "foo/bar"}, session)
    assert json.loads(body)["error"]["code"] == -32601
    status, _, body = _post(http_server, {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": CALL}, session)
    assert status == 200 and json.loads(json.loads(body)["result"]["content"][0]["text"])["orderId"] == "ORD-1001"


def test_http_a_request_whose_id_is_neither_a_string_nor_an_integer_is_refused_not_swallowed(http_server):
    # The SDK reads such a request as a notification and answers 202 with no body: its client would wait for ever.
    session = _session(http_server)
    for bad in (True, 1.5, None, [1], {}, 1e3):
        status, _, body = _post(http_server, {"jsonrpc": "2.0", "id": bad, "method": "ping"}, session)
        answer = json.loads(body)
        assert status == 400 and answer["id"] is None and answer["error"]["code"] == -32600, (bad, status, body)
        assert "neither a string nor an integer" in answer["error"]["message"]
    status, _, body = _post(http_server, {"jsonrpc": "2.0", "id": 5, "method": "ping"}, session)
    assert status == 200 and json.loads(body) == {"jsonrpc": "2.0", "id": 5, "result": {}}
    status, _, _ = _post(http_server, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}, session)
    assert status == 202  # a real notification is still accepted
