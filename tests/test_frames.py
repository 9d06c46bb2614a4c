"""What JSON-RPC owes a frame (qa/frames.py), and the one hostile engine judging wismo's own servers by it: a short
pass over the article's real servers, and a fake server that misbehaves on purpose, judged as wismo's own."""

import json
import sys

import pytest

from hostile_targets import target
from wismo.checks import frames, study_hostile
from wismo.checks.framegen import KINDS, frames_for
from wismo.checks.fuzz import MEMORY_LIMIT_MB
from wismo.checks.target import Target
from wismo.mcp.client.address import Address

# Real server processes: these tests read the server's own memory and behaviour from its pid.
pytestmark = pytest.mark.usefixtures("real_servers")

PROBE_ID = "frames-probe-1"


def probe_answer(ident=PROBE_ID):
    result = {"content": [{"type": "text", "text": json.dumps({"orderId": "ORD-1002"})}], "isError": False}
    return {"jsonrpc": "2.0", "id": ident, "result": result}


def null_error(code=-32700):
    return {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": "Parse error."}}


@pytest.mark.slow
def test_wismos_servers_answer_every_kind_of_frame_as_json_rpc_asks():
    for design in ("granular", "focused"):
        report = study_hostile.stdio_design(target(design), 100, 10.0)  # 100: lines of 16 and 40 MB, partial frames
        assert report["findings"] == [], report["findings"][:5]
        fixed = frames_for(target(design).normal_call("x")).fixed
        assert list(report["frames"]["cases"]) == list(KINDS)
        assert all(report["frames"]["cases"][k] >= 10 + len(fixed.get(k, ())) for k in KINDS), report["frames"]
        assert report["frames"]["exitCodeAtEndOfInput"] == 0 and report["frames"]["partialFrames"] == 7
        assert 0 < report["timings"]["peakServerRssMb"] < MEMORY_LIMIT_MB


def test_what_each_line_is_owed():
    assert frames.expect(b"this is not json") == ("error", None)
    assert frames.expect(b"\xff\xfe") == ("error", None)
    assert frames.expect(b"[1,2]") == ("error", None)
    assert frames.expect(b"[" * 100_000) == ("error", None)
    assert frames.expect(b'{"a":1}') == ("error", None)
    assert frames.expect(b'{"jsonrpc":"2.0","id":5,"method":"ping"}') == ("request", 5)
    assert frames.expect(b'{"jsonrpc":"2.0","id":"x","method":5}') == ("request", "x")
    assert frames.expect(b'{"jsonrpc":"2.0","id":true,"method":"ping"}') == ("request", None)
    assert frames.expect(b'{"jsonrpc":"2.0","id":1.0,"method":"ping"}') == ("request", None)
    assert frames.expect(b'{"jsonrpc":"2.0","method":"notifications/initialized"}') == ("quiet", None)
    assert frames.expect(b'{"jsonrpc":"2.0","id":3,"result":{}}') == ("quiet", None)


def owed(frame, *messages):
    judge = frames.Owed(frame, PROBE_ID)
    for message in messages:
        judge.take(message)
    return judge


def test_a_clean_exchange_owes_nothing():
    assert owed(b"not json", null_error(), probe_answer()).verdict() == []
    request = b'{"jsonrpc":"2.0","id":5,"method":"ping"}'
    judge = owed(request, probe_answer(), {"jsonrpc": "2.0", "id": 5, "result": {}})
    assert judge.settled() and judge.verdict() == []
    assert owed(b'{"jsonrpc":"2.0","id":true,"method":"ping"}', null_error(-32600), probe_answer()).verdict() == []
    assert owed(b'{"jsonrpc":"2.0","method":"x"}', {"jsonrpc": "2.0", "method": "log"}, probe_answer()).verdict() == []


def test_missing_extra_and_foreign_answers_are_problems():
    request = b'{"jsonrpc":"2.0","id":5,"method":"ping"}'
    unanswered = owed(request, probe_answer())
    assert not unanswered.settled() and "the request got 0 answers, not one." in unanswered.verdict()
    twice = owed(request, {"jsonrpc": "2.0", "id": 5, "result": {}}, null_error(), probe_answer())
    assert "the request got 2 answers, not one." in twice.verdict()
    assert owed(b"not json", probe_answer()).verdict() == ["the line got 0 errors with id null, not one."]
    assert owed(b"not json", null_error(), null_error(), probe_answer()).verdict()
    foreign = owed(b'{"jsonrpc":"2.0","method":"x"}', {"jsonrpc": "2.0", "id": 77, "result": {}}, probe_answer())
    assert any("nobody asked for" in p for p in foreign.verdict())
    # an id of the same value but another type is another id: 5 is not "5"
    assert owed(request, {"jsonrpc": "2.0", "id": "5", "result": {}}, probe_answer()).verdict()
    assert "the normal call was answered twice." in owed(b"x", null_error(), probe_answer(), probe_answer()).verdict()
    assert owed(b"x", {"jsonrpc": "2.0", "id": None, "result": {}}, probe_answer()).verdict()[0] == (
        "a result with id null."
    )


FAKE = """
import json, sys

mode = sys.argv[1]
for raw in sys.stdin.buffer:
    try:
        msg = json.loads(raw)
    except Exception:  # not JSON, too deep, not UTF-8: left unanswered, as many SDKs leave it
        msg = None
    if not isinstance(msg, dict) or "id" not in msg:
        if mode == "stray" and msg is None:
            print("debug: a line I could not read", flush=True)
        continue
    if msg.get("method") == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "fake", "version": "0"}}
    elif msg.get("method") == "tools/list":
        schema = {"type": "object", "properties": {"orderId": {"type": "string"}}, "required": ["orderId"]}
        result = {"tools": [{"name": "get_order_support_context", "inputSchema": schema}]}
    elif str(msg["id"]).startswith("frames-probe-"):
        text = json.dumps({"orderId": "ORD-1004"})
        result = {"content": [{"type": "text", "text": text}], "isError": False}
    elif msg.get("method") == "tools/call":
        text = "no\\nsuch thing" if mode == "unclear" else "There is no such order."
        result = {"content": [{"type": "text", "text": text}], "isError": True}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
    if mode == "chatty":
        print(json.dumps({"jsonrpc": "2.0", "id": "nobody", "result": {}}), flush=True)
if mode == "crash":
    sys.stderr.write("Traceback (most recent call last):\\n")
    sys.exit(1)
"""


@pytest.mark.parametrize("mode", ["good", "stray", "chatty", "unclear", "crash"])
def test_a_fake_server_judged_as_wismos_own_shows_each_fault_as_its_finding(tmp_path, mode):
    script = tmp_path / "fake_server.py"
    script.write_text(FAKE)
    article = target("focused")
    where = Address(command=(sys.executable, str(script), mode))
    fake = Target("fake", article.investigation, article.fields, where, strict=True)
    report = study_hostile.stdio_design(fake, 3, 2.0)
    found = {f["category"] for f in report["findings"]}
    # Every mode leaves lines that are not JSON unanswered: wismo's own servers answer them (-32700), so protocol.
    expected = {
        "good": {"protocol"},
        "stray": {"protocol", "stray output"},
        "chatty": {"protocol"},
        "unclear": {"protocol", "unclear error"},
        "crash": {"protocol", "traceback", "unclean exit"},
    }[mode]
    assert found == expected, report["findings"]
    if mode == "chatty":
        assert any("nobody asked for" in f["what"] for f in report["findings"])
    if mode != "unclear":
        return
    # The same server judged as a server nobody here wrote: none of wismo's own promises is a finding.
    lenient = Target("fake", article.investigation, article.fields, where)
    assert not {f["category"] for f in study_hostile.stdio_design(lenient, 3, 2.0)["findings"]} & {
        "protocol",
        "unclear error",
        "unclean exit",
    }
