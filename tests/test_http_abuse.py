"""HTTP abuse (`make fuzz` runs the long pass): a short pass on a real server, and the checks that decide what a
failure is, each shown to catch what it is for."""

import json

import matplotlib.pyplot as plt
import pytest

from hostile_targets import normal, target
from wismo.checks import http_abuse, sessions
from wismo.checks.findings import Record
from wismo.checks.http_abuse import case_problems, exit_problems, request
from wismo.reports import hostile, study_hostile
from wismo.reports.render import charts

# Real server processes: these tests read the server's own memory and behaviour from its pid.
pytestmark = pytest.mark.usefixtures("real_servers")


@pytest.mark.slow
def test_a_short_pass_of_every_kind_of_request_finds_the_server_well(tmp_path):
    record = Record("focused")
    report = http_abuse.abuse_design(target("focused"), 8, record)
    assert record.findings == [], record.findings
    assert set(report["cases"]) == {
        *http_abuse.case_strategies(target("granular").normal_call("x"), 0, lambda: "x"),
        "oversized body",
    }
    assert all(n == 8 for kind, n in report["cases"].items() if kind != "oversized body")
    statuses = {int(s) for by_status in report["statuses"].values() for s in by_status}
    assert statuses and max(statuses) < 500 and report["statuses"]["oversized body"] == {"413": 1}
    assert report["statuses"]["unknown session"] == {"404": 8}
    assert report["cleanExit"] and report["exitCode"] == 0 and report["stdoutBytes"] == 0
    assert report["parallelClients"]["wrongAnswers"] == 0 and report["slowClients"]["problem"] is None
    # What notebook 01 shows of it: the requests by kind, and the abandoned sessions' curve.
    bound = http_abuse.sessions_bound(target("focused"), 40, every=20)
    assert bound["wismo"]["failures"] == [] and [p["sessions"] for p in bound["wismo"]["curve"]] == [0, 20, 40]
    design = {"design": "focused", "servedHttp": report}
    fuzzed = {"count": 80, "perKind": 8, "designs": [design], "findings": [], "sessions": bound}
    (tmp_path / "fuzz.json").write_text(json.dumps(fuzzed))
    loaded = hostile.load(tmp_path)
    rows = study_hostile.served_rows(loaded)
    assert len(rows) == len(report["cases"]) and [r["findings"] for r in rows] == [0] * len(rows)
    header = "answered with (HTTP status × cases; -1 none in time, 0 closed)"
    assert next(r for r in rows if r["kind of request"] == "oversized body")[header] == "413 × 1"
    said = hostile.sessions_sentence(loaded)
    assert "40 clients each opened a session" in said and "within the bound of 100 MB" in said
    fig = charts.session_memory(*hostile.session_runs(loaded))
    ax = fig.axes[0]
    assert "(measured)" in ax.get_title() and "MB" in ax.get_ylabel() and ax.get_xlabel()
    plt.close(fig)


def test_a_server_error_no_answer_a_wrong_answer_an_exit_and_too_much_memory_are_each_a_finding():
    assert case_problems(400, None, None, 70.0) == []
    assert case_problems(404, None, None, None) == []
    assert case_problems(500, None, None, None) == [("server error", "the case was answered with HTTP 500")]
    assert case_problems(-1, None, None, None) == [("hang", "the case got no answer in time")]
    assert case_problems(200, "the normal call was answered otherwise than first: 'x'", None, None)[0][0] == (
        "changed answer"
    )
    assert case_problems(200, None, -9, None) == [("crash", "the server exited with code -9")]
    assert case_problems(200, None, None, 10_000.0)[0][0] == "over memory"
    assert case_problems(202, None, None, None) == []  # a notification is accepted with 202
    assert case_problems(202, None, None, None, owed=True) == [
        ("protocol", "a request was accepted as a notification (HTTP 202): its client would wait")
    ]


def test_a_stop_that_is_not_clean_is_named():
    assert exit_problems(0, 0, "wismo INFO a client disconnected\n") == []
    assert exit_problems(-15, 0, "") == ["the server exited with code -15 on SIGTERM"]
    assert exit_problems(0, 12, "") == ["the server wrote 12 bytes on stdout"]
    (problem,) = exit_problems(0, 0, "Traceback (most recent call last):\n  ...\nstarlette.requests.ClientDisconnect\n")
    assert "traceback" in problem and "ClientDisconnect" in problem


def test_the_normal_call_is_checked_for_its_id_success_and_the_same_answer_as_first():
    good = {"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": '{"orderId":"ORD-1004"}'}]}}
    judged = normal("granular")
    assert sessions.answer_problem(200, json.dumps(good).encode(), 7, judged) is None  # the first answer
    assert sessions.answer_problem(200, json.dumps(good).encode(), 7, judged) is None  # the same again
    assert sessions.answer_problem(200, json.dumps(good).encode(), 8, judged) is not None  # someone else's answer
    other = json.loads(json.dumps(good).replace("ORD-1004", "ORD-1001"))
    assert "otherwise than first" in sessions.answer_problem(200, json.dumps(other).encode(), 7, judged)
    failed = good | {"result": good["result"] | {"isError": True}}
    assert "an error" in sessions.answer_problem(200, json.dumps(failed).encode(), 7, judged)
    assert sessions.answer_problem(404, b"", 7, judged) == "the normal call was answered with HTTP 404: b''"
    assert sessions.answer_problem(200, b"<html>", 7, judged) is not None


def test_a_request_carries_the_length_of_its_body_and_the_headers_asked_for():
    data = request(8000, "PUT", "/x", {"Accept": "text/plain"}, b"{}")
    head, body = data.split(b"\r\n\r\n", 1)
    assert head.startswith(b"PUT /x HTTP/1.1\r\n") and b"Content-Length: 2" in head and body == b"{}"
    assert b"Accept: text/plain" in head and b"Host: 127.0.0.1:8000" in head


def test_a_broken_session_bound_is_named():
    bound = {
        "abandoned": 3000,
        "maxSessions": 100,
        "growthMb": 108.2,
        "boundMb": 100.0,
        "firstSessionAfterStatus": 200,
        "openingsRefused": 0,
        "newClientProblem": None,
    }
    assert http_abuse.bound_problems(bound) == [
        ("over memory", "3,000 abandoned sessions added 108.2 MB"),
        ("over memory", "the first session was kept past the cap (HTTP 200)"),
    ]
    fine = bound | {"growthMb": 12.5, "firstSessionAfterStatus": 404}
    assert http_abuse.bound_problems(fine) == []
    assert http_abuse.bound_problems(fine | {"abandoned": 40, "firstSessionAfterStatus": 200}) == []  # under the cap
