"""Hostile input on a study's own servers: the helpdesk's tiny servers and the reference filesystem server found
well (the study's tree untouched, no tool called that its investigation does not call), a design at a URL wismo did
not start, a planted crash and a planted hang found as findings while the pass goes on, notebook 01's section run
on a real output, `--hostile` checked and passed through; and the pieces: the cases built from schemas, the guard on
frames, the findings kept once with their count, event streams read."""

import hashlib
import json
import subprocess
import time

import pytest

import peers
from commands import wismo_argv
from notebook_cells import run_cells
from wismo import cli
from wismo.checks import findings, schema_args, study_hostile, target
from wismo.checks.framegen import KINDS, frames_for
from wismo.checks.hostile import STUDY_COUNT, per_kind
from wismo.checks.http_abuse import PATHS, paths_of
from wismo.checks.stdio_peer import StdioPeer
from wismo.checks.study_http import messages_in
from wismo.core.jsondiff import first_difference, without_timings
from wismo.core.paths import REPO_ROOT
from wismo.mcp.client.process import free_port
from wismo.mcp.client.raw import tools_call
from wismo.reports import equivalence
from wismo.reports import study_hostile as report
from wismo.studies.declaration import load

HELPDESK = REPO_ROOT / "tests" / "studies" / "helpdesk"
FILESYSTEM = REPO_ROOT / "data" / "studies" / "filesystem.toml"
SECTION = ("## Hostile input on this study's servers", "for shown in hostile.at_scale(")
# Planted in a copy of helpdesk.py, each behind a word of HELPDESK_HOSTILE: get_ticket exits on an ID of 5,000
# characters (the fixed "long" case), get_comment sleeps for ever on an empty ID (the fixed "empty" case).
CRASH = """        if "crash" in os.environ.get("HELPDESK_HOSTILE", "") and len(ticketId) >= 5000:
            print("planted: a ticket ID of 5,000 characters", file=sys.stderr, flush=True)
            os._exit(3)
"""
HANG = """        if "hang" in os.environ.get("HELPDESK_HOSTILE", "") and commentId == "":
            import time
            time.sleep(3600)
"""


def planted(folder, switches: str):
    """A copy of the helpdesk study whose granular server crashes and hangs as `switches` says."""
    folder.mkdir(parents=True, exist_ok=True)
    source = (HELPDESK / "helpdesk.py").read_text(encoding="utf-8")
    for after, code in (
        ('"""A ticket: its state, its customer\'s ID and its comments\' IDs."""\n', CRASH),
        ('"""One comment of a ticket."""\n', HANG),
    ):
        assert source.count(after) == 1
        source = source.replace(after, after + code)
    (folder / "helpdesk.py").write_text(source, encoding="utf-8")
    study = (HELPDESK / "helpdesk.toml").read_text(encoding="utf-8")
    granular = 'command = ["{python}", "helpdesk.py", "granular"]\n'
    study = study.replace(granular, granular + f'env = {{ HELPDESK_HOSTILE = "{switches}" }}\n')
    (folder / "helpdesk.toml").write_text(study, encoding="utf-8")
    return folder / "helpdesk.toml"


def by_place(result):
    return {(f["design"], f["category"], f["part"], f["where"]): f for f in result["findings"]}


@pytest.mark.slow
def test_the_helpdesk_servers_get_every_part_and_show_nothing_the_same_way_twice(tmp_path):
    params = {"study": str(HELPDESK / "helpdesk.toml"), "hostile_count": 3}
    first = report.build(params | {"output_dir": str(tmp_path / "a")})
    report.build(params | {"output_dir": str(tmp_path / "b")})
    a, b = (json.loads((tmp_path / x / report.OUTPUT).read_text(encoding="utf-8")) for x in "ab")
    assert first == a and first_difference(a, b) is None  # wall times and memory only under timings
    # Servers nobody here wrote are judged by what every server owes, never by wismo's own promises.
    owed = {c: m for c, m in findings.CATEGORIES.items() if c not in findings.STRICT}
    assert a["findings"] == [] and a["totals"]["byCategory"] == dict.fromkeys(owed, 0)
    assert a["categories"] == owed and a["perKind"] == per_kind(3)
    designs = {d["design"]: d for d in a["designs"]}
    assert list(designs) == ["granular", "focused"]
    assert set(designs["granular"]["arguments"]) == {"get_ticket", "get_customer", "get_comment"}
    for d in designs.values():
        assert d["transport"] == "stdio" and d["http"] is None and d["restarts"] == 0
        for stats in d["arguments"].values():  # one argument each: the fixed cases, then the generated ones
            assert stats["cases"] == schema_args.FIXED_PER_TOOL + schema_args.FIXED_PER_ARGUMENT + 3
            assert stats["results"] + stats["toolErrors"] + stats["protocolErrors"] == stats["cases"]
            assert stats["toolErrors"] > stats["results"] > 0  # the real ID answers; the hostile ones are refused
        made = frames_for(tools_call("get_ticket", {"ticketId": "T-1001"}, 1))
        small = {k: len(study_hostile.fixed_frames(made, k, big=False)) for k in KINDS}
        assert d["frames"]["cases"] == {k: per_kind(3) + small[k] for k in KINDS}
        assert d["frames"]["exitCodeAtEndOfInput"] == 0 and d["frames"]["bigLines"] is False
    outside = json.dumps(without_timings(a))
    assert "Rss" not in outside and "seconds" not in outside and set(a["timings"]["designs"]) == set(designs)


def tree_digest(folder):
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in folder.rglob("*")
        if p.is_file()
    }


@pytest.mark.slow
def test_the_filesystem_server_gets_hostile_input_at_read_only_tools_only(monkeypatch):
    peers.installed("peer-npm")
    tree = FILESYSTEM.parent / "filesystem"
    before = tree_digest(tree)
    sent: list[str] = []  # every tool named in a tools/call the pass wrote, frames included
    exchange = StdioPeer.exchange

    def watched(self, data, wanted, **how):
        sent.extend(name for raw in data.splitlines() for name in target._calls(_parsed(raw)))
        return exchange(self, data, wanted, **how)

    monkeypatch.setattr(StdioPeer, "exchange", watched)
    study = load(FILESYSTEM)
    result = study_hostile.run(study, 3)
    assert tree_digest(tree) == before  # nothing under data/studies/filesystem was written, moved or created
    assert result["findings"] == [], result["findings"]
    for d in result["designs"]:
        called = sorted(study.designs[d["design"]].investigation.tools())
        assert list(d["toolsCalled"]) == called and all(t["readOnly"] is True for t in d["toolsCalled"].values())
        assert {"write_file", "edit_file", "move_file", "create_directory"} <= set(d["toolsNeverCalled"])
    offered = {t for d in result["designs"] for t in [*d["toolsCalled"], *d["toolsNeverCalled"]]}
    allowed = {t for d in study.designs.values() for t in d.investigation.tools()}
    assert sent and not set(sent) & (offered - allowed), set(sent) & (offered - allowed)


def _parsed(raw):
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


@pytest.mark.slow
def test_a_planted_crash_and_a_planted_hang_are_findings_and_the_pass_goes_on(tmp_path):
    study = load(planted(tmp_path / "planted", "crash,hang"))
    result = study_hostile.run(study, 2, deadline_s=2.0)
    found = by_place(result)
    # The frames are made from the design's own normal call: a long line's ticket ID reaches get_ticket too.
    assert set(found) == {
        ("granular", "crash", "arguments", "get_ticket"),
        ("granular", "hang", "arguments", "get_comment"),
        ("granular", "crash", "frames", "long line"),
    }, result["findings"]
    crash = found[("granular", "crash", "arguments", "get_ticket")]
    assert crash["input"].startswith('{"ticketId": "9999') and crash["input"].endswith("(5,016 characters)")
    said = "planted: a ticket ID of 5,000 characters"
    assert crash["what"] == f"the server exited with code 3; its stderr ends with: {said}"
    hang = found[("granular", "hang", "arguments", "get_comment")]
    assert hang["input"] == '{"commentId": ""}' and hang["what"] == "the case got no answer within 2 s"
    granular, focused = result["designs"]
    assert granular["restarts"] == 3 and granular["stoppedEarly"] is None and focused["restarts"] == 0
    # Every case still ran, each after a fresh server where one was needed.
    assert all(
        t["cases"] == schema_args.FIXED_PER_TOOL + schema_args.FIXED_PER_ARGUMENT + 2
        for t in granular["arguments"].values()
    )
    assert sum(granular["frames"]["cases"].values()) == sum(focused["frames"]["cases"].values())
    assert result["totals"]["byCategory"]["crash"] == 2 and result["totals"]["byCategory"]["hang"] == 1


@pytest.mark.slow
def test_notebook_01_shows_a_studys_findings_naming_its_designs_and_tools(tmp_path):
    study = planted(tmp_path / "planted", "crash")
    out = tmp_path / "out"
    p = equivalence.checked({"study": str(study), "output_dir": str(out)})
    shown = run_cells(*SECTION, {"p": p, "hostile_count": 2})
    text = "\n".join(shown["markdown"])
    assert "**granular** (over stdio): `get_comment` (no read-only mark)" in text and "`get_ticket_context`" in text
    assert "crash 2, hang 0, traceback 0" in text and "2 findings." in text  # by arguments and by a long line
    # No design is reached at a URL and none is served by wismo: those parts are left out, not said empty.
    assert "URL" not in text and "wismo serves" not in text and "(measured, this run)" in text
    assert "### Frames over stdio" in text
    # Designs, categories, findings (the one crash), arguments (four tools), frames (every kind).
    assert shown["tables"] == [2, len(findings.CATEGORIES) - len(findings.STRICT), 2, 4, len(KINDS)], shown
    written = json.loads((out / report.OUTPUT).read_text(encoding="utf-8"))
    assert report.finding_rows(written)[0] | {"what happened": ""} == {
        "finding": "crash",
        "design": "granular",
        "part": "arguments",
        "tool or kind": "get_ticket",
        "first input (shortened)": written["findings"][0]["input"],
        "what happened": "",
        "cases": 1,
    }
    zero = run_cells(*SECTION, {"p": p | {"output_dir": str(tmp_path / "zero")}, "hostile_count": 0})
    assert zero == {"markdown": [report.summary_sentence({"count": 0})], "tables": [], "charts": 0}
    assert zero["markdown"][0].count(". ") == 0 and "`--hostile 0`" in zero["markdown"][0]


@pytest.mark.slow
def test_a_design_at_a_url_gets_hostile_requests_in_two_sessions_and_is_never_stopped(tmp_path):
    port = free_port()
    server = subprocess.Popen(
        wismo_argv("serve", "focused", "--http", str(port)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        study_file = tmp_path / "remote.toml"
        study_file.write_text(
            'title = "Remote"\nquestion = "Where is {orderId}?"\n'
            f'[designs.remote]\nurl = "http://127.0.0.1:{port}/mcp"\n'
            'entry = { tool = "get_order_support_context", arguments = { orderId = "{orderId}" } }\n'
            '[designs.local]\nserve = "focused"\n[[cases]]\nlabel = "partial"\norderId = "ORD-1004"\n',
            encoding="utf-8",
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not _listening(port):
            time.sleep(0.1)
        result = study_hostile.run(load(study_file), 3)
        assert server.poll() is None  # not stopped, not crashed
    finally:
        server.terminate()
        server.wait(10)
    assert result["findings"] == [], result["findings"]
    remote, local = result["designs"]
    assert (remote["transport"], local["transport"]) == ("http", "stdio") and remote["frames"] is None
    http = remote["http"]
    assert http["sessionsOpened"] == 2 and http["leftOut"] is None
    assert all(n == per_kind(3) for kind, n in http["cases"].items() if kind != "oversized body")
    assert http["statuses"]["oversized body"] == {"413": 1} and http["statuses"]["unknown session"] == {"404": 1}
    assert remote["arguments"]["get_order_support_context"]["results"] > 0
    assert "peakServerRssMb" not in result["timings"]["designs"]["remote"]  # not ours to read
    assert report.http_rows(result)[0]["kind of request"] == "body without a session"


def _listening(port):
    import socket

    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        return True
    except OSError:
        return False


# --- the command line, and the notebook's parameter -----------------------------------------------------------


@pytest.mark.parametrize(
    "given, said",
    [
        ("-1", "--hostile must be 0 or more, not -1"),
        ("ten", "--hostile must be a whole number of 0 or more, not 'ten'"),
    ],
)
def test_a_bad_hostile_count_is_one_sentence_and_exit_2(given, said, tmp_path, capsys):
    argv = ["study", "run", str(HELPDESK / "helpdesk.toml"), "--hostile", given, "--out", str(tmp_path / "o")]
    assert cli.main(argv) == 2
    assert capsys.readouterr().err == f"wismo study: {said}\n" and not (tmp_path / "o").exists()


def test_study_run_passes_the_hostile_count_to_the_notebooks(tmp_path, monkeypatch):
    from wismo.reports import study_run as study_run

    passed = {}
    monkeypatch.setattr(study_run, "run", lambda study, out, params, jobs: passed.update(params) or _Done(tmp_path))
    monkeypatch.setattr("wismo.studies.servers.check", _no_problems)
    for argv, count in ((["--hostile", "0"], 0), (["--hostile", "25"], 25), ([], None)):
        passed.clear()
        assert cli.main(["study", "run", str(HELPDESK / "helpdesk.toml"), "--out", str(tmp_path), *argv]) == 0
        assert passed.get("hostile_count") == count
    import papermill

    declared = papermill.inspect_notebook(str(REPO_ROOT / "notebooks" / "01-equivalence.ipynb"))
    assert declared["hostile_count"]["default"] == str(STUDY_COUNT) == str(equivalence.DEFAULTS["hostile_count"])


class _Done:
    def __init__(self, out):
        self.out, self.rendered, self.differing, self.unfollowed = out, [], [], []


async def _no_problems(study, transport=None):
    return []


# --- the pieces ------------------------------------------------------------------------------------------------


def test_the_fixed_cases_follow_each_argument_of_the_schema():
    tool = {
        "name": "t",
        "inputSchema": {
            "properties": {
                "path": {"type": "string"},
                "n": {"type": "number"},
                "paths": {"type": "array", "items": {"type": "string"}},
            }
        },
    }
    cases = schema_args.fixed(tool, {"path": "a.txt"})
    assert len(cases) == schema_args.FIXED_PER_TOOL + 3 * schema_args.FIXED_PER_ARGUMENT
    assert cases[:2] == [{}, {"path": "a.txt", schema_args.UNKNOWN: "x"}]
    assert {"path": "a.txt", "n": 0} in cases and {"path": "a.txt", "paths": []} in cases
    assert {"path": schema_args.LONG} in cases and {"path": "a.txt", "paths": [schema_args.LONG]} in cases
    assert {"path": 12345678901234567890} in cases and {"path": "a.txt", "n": "not a number, nor a list"} in cases


def test_a_frame_calling_a_tool_the_pass_may_not_call_is_withheld():
    forbidden = {"write_file"}
    assert target.withheld(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file"}}', forbidden)
    assert target.withheld(b'[{"method":"tools/call","params":{"name":"wr\\u0069te_file"}}]', forbidden)  # escaped
    assert not target.withheld(b'{"method":"tools/call","params":{"name":"read_file"}}', forbidden)
    assert not target.withheld(b"\xff write_file", forbidden) and not target.withheld(b"[" * 10, set())


def test_a_finding_is_kept_once_with_the_cases_that_showed_it():
    record = findings.Record("granular", baseline="same")
    for _ in range(findings.MAX_FAULTS):
        record.add("crash", "arguments", "get_ticket", "x" * 500, "the server exited with code 3")
    assert [f["cases"] for f in record.findings] == [findings.MAX_FAULTS]
    assert record.findings[0]["input"].endswith("(502 characters)") and record.stopped("arguments", "get_ticket")
    assert not record.stopped("arguments", "get_comment") and record.skipped == 1
    with pytest.raises(KeyError):
        findings.finding("rude", "d", "arguments", "t", "", "")
    assert findings.has_traceback("Traceback (most recent call last):\n  File ...")
    assert findings.has_traceback("Error: x\n    at Object.<anonymous> (/srv/index.js:10:5)")
    assert not findings.has_traceback("Access denied - path outside allowed directories: /etc")


def test_a_changed_answer_a_stray_line_and_a_5xx_are_findings():
    def answer(text):
        return {"result": {"content": [{"type": "text", "text": text}]}}

    record = findings.Record("d", baseline=findings.answer_text(answer("a")))
    got = findings.Exchange(answers={"p": answer("b")}, stray=[b"debug"])
    got.status = 502
    record.judge(got, "http", "headers", b"x", "p")
    assert [f["category"] for f in record.findings] == ["stray output", "server error", "changed answer"]


def test_event_streams_and_json_bodies_are_both_read():
    stream = b'event: message\ndata: {"jsonrpc":"2.0","id":"a","result":{}}\n\n'
    assert messages_in("text/event-stream", stream) == [{"jsonrpc": "2.0", "id": "a", "result": {}}]
    assert messages_in("application/json", b'{"jsonrpc":"2.0","id":1,"result":{}}')[0]["id"] == 1
    assert messages_in("text/html", b"<h1>500</h1>") == []
    assert paths_of("/mcp") == PATHS and paths_of("/api/mcp")[0] == "/api/mcp"


def test_a_stack_trace_in_an_answer_is_found_where_json_would_hide_it():
    record = findings.Record("d")
    stack = "Error: boom\n    at readFile (/srv/index.js:10:5)\n    at process (node:internal/fs:1:2)"
    got = findings.Exchange(answers={"c": {"result": {"isError": True, "content": [{"type": "text", "text": stack}]}}})
    assert record.judge(got, "arguments", "read_file", {"path": ""}, "p", "c") == "toolErrors"
    (found,) = record.findings
    assert found["category"] == "traceback" and found["what"].startswith("the answer carries a stack trace: Error")


def test_a_pass_that_stopped_early_says_so():
    result = {
        "count": 3,
        "designs": [
            {
                "design": "walk",
                "transport": "stdio",
                "toolsCalled": {},
                "toolsNeverCalled": [],
                "stoppedEarly": "the walk server could not be used: x; the pass stopped there",
                "skippedCases": 2,
            }
        ],
        "totals": {"cases": 9, "findings": 1},
    }
    said = report.summary_sentence(result)
    assert "On **walk**, the walk server could not be used: x; the pass stopped there." in said
    assert "On **walk**, 2 cases not sent: the tool or kind it was for had crashed or hung 3 times." in said


def test_an_ignored_clock_is_no_changed_answer_and_anything_else_still_is():
    from wismo.checks.findings import Exchange, Record, answer_text

    def answer(checked_at: str, status: str = "open") -> dict:
        text = json.dumps({"ticketId": "T-1", "status": status, "checkedAt": checked_at})
        return {"jsonrpc": "2.0", "id": "n", "result": {"content": [{"type": "text", "text": text}]}}

    first = answer("12:00:00")
    for ignore, changed in (((), True), (("checkedAt",), False)):
        record = Record("clock", answer_text(first, ignore), ignore)
        record.judge(Exchange(answers={"n": answer("12:00:01")}), "arguments", "get_ticket", {}, "n")
        assert any(f["category"] == "changed answer" for f in record.findings) is changed, ignore
    record = Record("clock", answer_text(first, ("checkedAt",)), ("checkedAt",))
    record.judge(Exchange(answers={"n": answer("12:00:01", "closed")}), "arguments", "get_ticket", {}, "n")
    assert [f["category"] for f in record.findings] == ["changed answer"]  # the status changed: still a finding


def test_a_study_ignores_keys_for_all_its_designs_or_for_one(tmp_path):
    from wismo.studies import declaration, matching

    text = (REPO_ROOT / "tests" / "studies" / "helpdesk" / "helpdesk.toml").read_text(encoding="utf-8")
    text = 'ignore = ["checkedAt"]\n' + text.replace(
        "[designs.focused]\n", '[designs.focused]\nignore = ["servedBy", "checkedAt"]\n'
    )
    path = tmp_path / "helpdesk" / "clock.toml"
    path.parent.mkdir()
    for f in (REPO_ROOT / "tests" / "studies" / "helpdesk").iterdir():
        if f.is_file():
            (path.parent / f.name).write_bytes(f.read_bytes())
    path.write_text(text, encoding="utf-8")
    study = declaration.load(path)
    assert study.ignored("granular", "focused") == ("checkedAt", "servedBy") and study.ignored("granular") == (
        "checkedAt",
    )
    ref = {"ticket": {"id": "T-1", "checkedAt": "12:00"}}
    other = {"ticket": {"id": "T-1", "checkedAt": "12:05", "servedBy": "node-2"}}
    keys = study.ignored("granular", "focused")
    assert (
        matching.match("equal").differences(matching.without(ref, keys), matching.without(other, keys), ("a", "b"))
        == []
    )
    bad = path.with_name("bad.toml")
    bad.write_text('ignore = "checkedAt"\n' + text.split("\n", 1)[1], encoding="utf-8")
    with pytest.raises(declaration.StudyInvalid, match=r"ignore must be a list of object keys"):
        declaration.load(bad)


def test_the_report_says_what_a_study_ignores():
    from types import SimpleNamespace

    from wismo.reports import sentences

    study = SimpleNamespace(
        ignore=("checkedAt",),
        designs={"granular": SimpleNamespace(ignore=()), "focused": SimpleNamespace(ignore=("servedBy", "checkedAt"))},
    )
    assert sentences.ignored_clause(study) == (
        " Left out of matching wherever they occur: `checkedAt` (every design), `servedBy` (focused)."
    )
    assert sentences.ignored_clause(SimpleNamespace(ignore=(), designs={"a": SimpleNamespace(ignore=())})) == ""


@pytest.mark.anyio
async def test_study_check_quotes_the_stderr_of_a_server_that_dies_at_start(tmp_path):
    from wismo.studies import declaration, servers

    text = (HELPDESK / "helpdesk.toml").read_text(encoding="utf-8")
    code = 'import sys; sys.stderr.write(\\"ImportError: no module named ticketdb\\\\n\\"); sys.exit(3)'
    dying = f'["{{python}}", "-c", "{code}"]'
    text = text.replace('command = ["{python}", "helpdesk.py", "focused"]', f"command = {dying}")
    for f in HELPDESK.iterdir():
        if f.is_file():
            (tmp_path / f.name).write_bytes(f.read_bytes())
    path = tmp_path / "dying.toml"
    path.write_text(text, encoding="utf-8")
    (problem,) = await servers.check(declaration.load(path))
    assert problem.startswith('design "focused": the server cannot be reached') and (
        "its stderr ends with: ImportError: no module named ticketdb" in problem
    ), problem
