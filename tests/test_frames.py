"""Frame-level abuse of the stdio servers: a short pass over real servers (`make fuzz` runs the long one), and the
checker's own tests, against a fake server that misbehaves on purpose."""

import json
import sys

import pytest

from wismo.core.jsonfmt import write_stable
from wismo.qa import frames
from wismo.qa.framegen import KINDS, frames_for
from wismo.qa.fuzz import MEMORY_LIMIT_MB
from wismo.qa.normal import normal_call

# Real server processes: these tests read the server's own memory and behaviour from its pid.
pytestmark = pytest.mark.usefixtures("real_servers")


PROBE_ID, ORDER = "frames-probe-1", "ORD-1002"


def probe_answer(order=ORDER, ident=PROBE_ID, is_error=False):
    text = json.dumps({"orderId": order})
    result = {"content": [{"type": "text", "text": text}], "isError": is_error}
    return json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}).encode()


def null_error(code=-32700):
    return json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": "Parse error."}}).encode()


@pytest.mark.slow
def test_the_servers_survive_every_kind_of_frame(tmp_path):
    result = frames.fuzz_frames(10, ("granular", "focused"))
    failures = [f for d in result["designs"] for f in d["failures"]] + result["eofCases"]["failures"]
    assert result["totals"]["failures"] == 0 and not failures, failures[:10]
    for design in result["designs"]:
        assert list(design["cases"]) == list(KINDS)
        fixed = frames_for(normal_call(design["design"])).fixed
        assert all(design["cases"][k] >= 10 + len(fixed.get(k, ())) for k in KINDS), design["cases"]
        assert design["cleanExit"] is True
        assert 0 < design["startServerRssMb"] <= design["peakServerRssMb"] < MEMORY_LIMIT_MB
    eof = len(frames_for(normal_call("granular")).eof)
    assert result["eofCases"]["cases"] == eof
    assert result["totals"]["cases"] == sum(sum(d["cases"].values()) for d in result["designs"]) + eof
    write_stable(tmp_path / "frames.json", result)  # the shape fuzz.json takes: stable JSON


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


def judged(frame, *lines):
    judge = frames.Judge(frame, PROBE_ID, ORDER)
    for line in lines:
        judge.take(line)
    return judge


def test_a_clean_exchange_has_no_problems():
    assert judged(b"not json", null_error(), probe_answer()).verdict() == []
    request = b'{"jsonrpc":"2.0","id":5,"method":"ping"}'
    judge = judged(request, probe_answer(), b'{"jsonrpc":"2.0","id":5,"result":{}}')
    assert judge.done() and judge.verdict() == []
    assert judged(b'{"jsonrpc":"2.0","id":true,"method":"ping"}', null_error(-32600), probe_answer()).verdict() == []


def test_a_stray_line_on_stdout_is_a_failure():
    judge = judged(b"not json", b"debug: got a line\n", null_error(), probe_answer())
    assert judge.done() and any("not a JSON-RPC message" in p for p in judge.verdict())
    assert judged(b"not json", b'{"jsonrpc":"1.0","id":null}', null_error(), probe_answer()).verdict()
    assert judged(b"not json", b"[]", null_error(), probe_answer()).verdict()


def test_a_wrong_answer_to_the_normal_call_is_a_failure():
    assert any("answered wrongly" in p for p in judged(b"not json", null_error(), probe_answer("ORD-1003")).verdict())
    assert judged(b"not json", null_error(), probe_answer(is_error=True)).verdict()
    bare = json.dumps({"jsonrpc": "2.0", "id": PROBE_ID, "result": {"content": []}}).encode()
    assert judged(b"not json", null_error(), bare).verdict()


def test_missing_extra_and_foreign_answers_are_failures():
    request = b'{"jsonrpc":"2.0","id":5,"method":"ping"}'
    unanswered = judged(request, probe_answer())
    assert not unanswered.done() and "the request got 0 answers, not one." in unanswered.verdict()
    twice = judged(request, b'{"jsonrpc":"2.0","id":5,"result":{}}', null_error(), probe_answer())
    assert "the request got 2 answers, not one." in twice.verdict()
    assert judged(b"not json", probe_answer()).verdict() == ["the line got 0 errors with id null, not one."]
    assert judged(b"not json", null_error(), null_error(), probe_answer()).verdict()
    foreign = judged(b'{"jsonrpc":"2.0","method":"x"}', b'{"jsonrpc":"2.0","id":77,"result":{}}', probe_answer())
    assert any("nobody asked for" in p for p in foreign.verdict())
    # an id of the same value but another type is another id: 5 is not "5"
    assert judged(request, b'{"jsonrpc":"2.0","id":"5","result":{}}', probe_answer()).verdict()
    assert "the normal call got no answer." in judged(b"not json", null_error()).verdict()


FAKE = """
import json, sys

mode = sys.argv[1]
for raw in sys.stdin.buffer:
    try:
        msg = json.loads(raw)
    except ValueError:
        msg = None
    if not isinstance(msg, dict) or "id" not in msg:
        if mode == "stray":
            print("debug: a line I could not read", flush=True)
        continue
    if msg.get("method") == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "fake", "version": "0"}}
    elif str(msg["id"]).startswith("frames-probe-"):
        order = "ORD-9999" if mode == "wrong" else msg["params"]["arguments"]["orderId"]
        result = {"content": [{"type": "text", "text": json.dumps({"orderId": order})}], "isError": False}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
if mode == "crash":
    sys.stderr.write("Traceback (most recent call last):\\n")
    sys.exit(1)
"""
NOTIFICATION = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


@pytest.mark.parametrize("mode", ["good", "stray", "wrong", "crash"])
def test_the_session_records_what_a_misbehaving_server_does(tmp_path, mode):
    script = tmp_path / "fake_server.py"
    script.write_text(FAKE)
    session = frames.Session("granular", command=[sys.executable, str(script), mode])
    session.case("valid but odd", NOTIFICATION)
    session.case("valid but odd", b'{"jsonrpc":"2.0","id":"x","method":"ping"}')
    clean = session.finish()
    problems = [f["problem"] for f in session.failures]
    assert session.cases["valid but odd"] == 2
    if mode == "good":
        assert problems == [] and clean
    elif mode == "stray":
        stray = "stdout carried a line that is not a JSON-RPC message: b'debug: a line I could not read\\n'."
        assert problems == [stray, stray]  # one after notifications/initialized (the handshake's), one after the frame
    elif mode == "wrong":
        assert len(problems) == 2 and all("answered wrongly" in p for p in problems)
    else:
        assert not clean and any("exited with 1" in p for p in problems) and any("traceback" in p for p in problems)
