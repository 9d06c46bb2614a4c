"""`wismo tokens` against a server of our own (wismo.bench.toolserver): complete counts of nested schemas, pinned;
stdio and Streamable HTTP alike; the budget's exit code; the change from a baseline; every bad target in one
sentence with exit code 2 within a bounded time."""

import copy
import json
import socket
import subprocess
import sys
import time

import pytest

from commands import wismo_argv
from wismo.accounting import tokens
from wismo.core import processes
from wismo.mcp.client.process import free_port
from wismo.studies.audit import measure as servertokens
from wismo.studies.audit import table
from wismo.studies.audit.target import parse_call, target

pytestmark = pytest.mark.anyio


def toolserver() -> list[str]:
    """The test server's command: forked by the suite (conftest.forked_servers) unless a test asks for the real one."""
    return [processes.interpreter(), "-m", "wismo.bench.toolserver"]


CALLS = ["--call", "echo", '{"text": "Where is my order?"}', "--call", "split", '{"text": "abcdef"}']


def wismo_tokens(*args, timeout=90):
    """Run `wismo tokens ARGS`; the finished process and its wall time."""
    started = time.perf_counter()
    done = subprocess.run(wismo_argv("tokens", *args), capture_output=True, text=True, timeout=timeout)
    return done, time.perf_counter() - started


@pytest.fixture(scope="module")
def measured():
    """The test server measured once through the command line, with two sampled calls."""
    done, _ = wismo_tokens("--json", *CALLS, "--", *toolserver())
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def harmony(measurement, tool):
    """One tool's harmony figures without the labels."""
    figures = next(t for t in measurement["tools"] if t["name"] == tool)["harmony"]
    return {k: figures[k] for k in ("total", "name", "description", "parameters")}


def test_the_test_server_is_counted_completely_and_pinned(measured):
    assert [t["name"] for t in measured["tools"]] == ["plan_route", "echo", "split", "ping"]
    assert harmony(measured, "plan_route") == {"total": 148, "name": 2, "description": 15, "parameters": 126}
    totals = {k: measured["definitions"][k]["total"] for k in ("harmony", "cookbook", "json")}
    assert totals == {"harmony": 238, "cookbook": 187, "json": 439}
    # The whole is the tools' blocks plus the namespace frame; the shares, frame included, make 100 %.
    d = measured["definitions"]
    assert d["harmony"]["total"] == sum(t["harmony"]["total"] for t in measured["tools"]) + d["harmony"]["frame"]
    assert sum(t["sharePercent"] for t in measured["tools"]) + d["harmonyFrameSharePercent"] == pytest.approx(
        100, abs=0.2
    )
    plan = measured["tools"][0]
    assert plan["harmonyLeavesOut"] == ["$defs", "$ref", "anyOf"]
    assert plan["harmony"]["parameters"] > plan["cookbook"]["parameters"]  # the nested fields are in the count
    assert measured["instructions"] | {"method": None} == {
        "present": True,
        "tokens": 20,
        "bytes": 101,
        "method": None,
        "encoding": "o200k_base",
        "label": tokens.LABEL,
    }
    assert [(e["name"], e["tokens"]) for e in measured["prompts"]["entries"]] == [("summarize_route", 39)]
    assert [(e["uri"], e["tokens"]) for e in measured["resources"]["entries"]] == [("file:///depots.json", 28)]
    assert measured["server"]["capabilities"] == ["prompts", "resources", "tools"]


def test_every_figure_carries_its_method_and_encoding(measured):
    labelled = [measured["definitions"][k] for k in ("harmony", "cookbook", "json")]
    labelled += [t[k] for t in measured["tools"] for k in ("harmony", "cookbook", "json")]
    labelled += [measured[k] for k in ("instructions", "prompts", "resources")]
    for figures in labelled:
        assert figures["method"] and figures["encoding"] == "o200k_base" and figures["label"] == tokens.LABEL
    assert measured["calls"]["encoding"] == "o200k_base" and measured["calls"]["bareMethod"]


def test_sampled_results_are_counted_bare_and_under_every_profile(measured):
    echo, split = measured["calls"]["results"]
    text = "Where is my order?"
    assert echo["bare"] == {"tokens": tokens.count_text(text), "bytes": len(text)}
    assert echo["profiles"]["python"] == echo["bare"]
    # The C# profiles send the whole CallToolResult as JSON: more than the text, and the escaped form is not the
    # indented one.
    assert echo["profiles"]["csharp-raw-element"]["bytes"] > echo["bare"]["bytes"]
    assert echo["profiles"]["csharp-raw-element"] != echo["profiles"]["csharp-relaxed"]
    assert "one text block" in split["profiles"]["python"]["error"] and split["bare"]["bytes"] == len("abc\ndef")


def test_nested_fields_count_where_the_cookbook_sees_nothing():
    from wismo.bench.toolserver import TOOLS

    def counted(tool):
        rows, _ = servertokens._definitions(
            [tool.model_dump(mode="json", by_alias=True, exclude_none=True)], "o200k_base"
        )
        return {k: rows[0][k]["total"] for k in ("harmony", "cookbook", "json")}

    before = counted(TOOLS[0])
    deeper = copy.deepcopy(TOOLS[0])
    deeper.input_schema["properties"]["stops"]["items"]["properties"]["orderId"]["description"] += " It must exist."
    after = counted(deeper)
    assert after["harmony"] > before["harmony"] and after["json"] > before["json"]
    assert after["cookbook"] == before["cookbook"], "the cookbook reads top-level properties only"
    # $defs reach the JSON count; harmony renders the $ref as 'any' and says so.
    defs = copy.deepcopy(TOOLS[0])
    defs.input_schema["$defs"]["Address"]["description"] += " Depots only."
    assert counted(defs)["json"] > before["json"] and counted(defs)["harmony"] == before["harmony"]


def _listening(port, process, within=30.0):
    """Wait until `process` accepts connections on `port`."""
    end = time.monotonic() + within
    while time.monotonic() < end and process.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"the test server did not listen on {port}")


async def test_a_streamable_http_target_counts_the_same(measured):
    port = free_port()
    server = subprocess.Popen(
        [*toolserver(), "--http", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        _listening(port, server)
        url = f"http://127.0.0.1:{port}/mcp"
        over_http = await servertokens.measure(target([], url), [parse_call("echo", '{"text": "Where is my order?"}')])
    finally:
        server.terminate()
        server.wait(10)
    assert over_http["target"] == {"transport": "http", "url": url}
    for key in ("tools", "definitions", "instructions", "prompts", "resources", "server"):
        assert over_http[key] == measured[key], key
    assert over_http["calls"]["results"][0] == measured["calls"]["results"][0]


def test_the_json_is_deterministic_with_timings_apart(measured, real_servers):
    # This `wismo tokens` and its server from the real interpreter, the first two forked: each with its own hash
    # seed, as two users' runs are. The JSON records the target's command, which differs only by its interpreter.
    again, _ = wismo_tokens("--json", *CALLS, "--", *toolserver())
    second = json.loads(again.stdout)
    assert set(measured["timings"]) == {
        "importMs",
        "connectMs",
        "listMs",
        "gatherMs",
        "waitMs",
        "countMs",
        "callsMs",
        "resultsMs",
        "totalMs",
    }
    assert second["target"]["command"][1:] == measured["target"]["command"][1:]
    assert second["target"]["transport"] == measured["target"]["transport"]
    assert {**second, "timings": None, "target": None} == {**measured, "timings": None, "target": None}
    assert again.stdout == json.dumps({**second}, ensure_ascii=False, sort_keys=True, indent=2) + "\n"


def test_the_budget_and_the_baseline(measured, tmp_path):
    baseline = copy.deepcopy(measured)
    tools = {t["name"]: t for t in baseline["tools"]}
    tools["echo"]["harmony"]["total"] -= 5  # echo has grown by 5 since
    tools["split"]["harmony"]["total"] += 2  # split has shrunk by 2
    baseline["tools"] = [
        tools["plan_route"],
        tools["echo"],
        tools["split"],
        {**tools["ping"], "name": "retired_tool"},
    ]  # ping is new, retired_tool is gone
    baseline["definitions"]["harmony"]["total"] = 230
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(baseline))
    done, _ = wismo_tokens("--baseline", str(path), "--max-tokens", "200", "--", *toolserver())
    assert done.returncode == 1
    assert done.stderr == (
        "wismo tokens: the tool definitions take 238 tokens (harmony, o200k_base), 38 over the "
        "budget of 200; heaviest: plan_route (148), split (31), echo (29)\n"
    )
    diff = done.stdout[done.stdout.index(f"--- {path} (baseline)") :].splitlines()
    assert diff[2:] == [
        "definitions: 230 -> 238 tokens (+8); 4 tools changed, 1 unchanged",
        "~ echo: grown 24 -> 29 (+5)",
        "+ ping: added 14 (+14)",
        "- retired_tool: removed 14 (-14)",
        "~ split: shrunk 33 -> 31 (-2)",
    ]
    # The table comes first, heaviest tool first.
    assert [line.split()[0] for line in done.stdout.splitlines()[3:7]] == ["plan_route", "split", "echo", "ping"]
    assert table.over_budget(measured, 238) is None and table.over_budget(measured, 237)


def test_a_bad_baseline_or_call_is_named_before_any_server_starts(tmp_path):
    (tmp_path / "other.json").write_text('{"tools": 3}')
    for args, said in [
        (["--baseline", str(tmp_path / "none.json")], "cannot read the baseline"),
        (["--baseline", str(tmp_path / "other.json")], "is not the output of `wismo tokens --json`"),
        (["--call", "echo", "{text}"], "--call echo: the arguments are not JSON"),
        (["--call", "echo", "[1]"], "--call echo: the arguments must be a JSON object, got list"),
    ]:
        done, _ = wismo_tokens(*args, "--", "sleep", "100")
        assert done.returncode == 2 and said in done.stderr and done.stderr.count("\n") == 1, done.stderr


@pytest.mark.parametrize(
    "args, said, within",
    [
        (
            ["--", "/nonexistent/server"],
            "cannot start '/nonexistent/server': no command '/nonexistent/server' is here or on PATH",
            15,
        ),
        (["--", "cat"], "`cat` is not an MCP server: it answered initialize with the error 'Method not found'", 20),
        (
            ["--", sys.executable, "-c", "print(1)"],
            "-c print(1)` is not an MCP server: it closed the connection without answering initialize after writing 1 "
            "line that is not JSON-RPC",
            20,
        ),
        (["--timeout", "2", "--", "sleep", "100"], "`sleep 100` did not answer the MCP handshake within 2 s", 20),
        (
            ["--url", "http://127.0.0.1:{port}/mcp"],
            "nothing answers at http://127.0.0.1:{port}/mcp (All connection attempts failed)",
            20,
        ),
    ],
    ids=["missing command", "not MCP (echoes)", "not MCP (prints)", "no handshake", "HTTP, nothing listening"],
)
def test_a_bad_target_gets_one_sentence_and_exit_code_2(args, said, within):
    port = str(free_port())
    done, elapsed = wismo_tokens(*(a.replace("{port}", port) for a in args))
    assert done.returncode == 2
    assert done.stderr.startswith("wismo tokens: ") and done.stderr.count("\n") == 1, done.stderr
    assert said.replace("{port}", port) in done.stderr and done.stdout == ""
    assert elapsed < within


def test_a_server_without_tools_costs_nothing_in_definitions():
    rows, totals = servertokens._definitions([], "o200k_base")
    assert rows == [] and [totals[k]["total"] for k in ("harmony", "cookbook", "json")] == [0, 0, 0]


def test_peers_gathers_measurements_into_one_file_and_a_table(measured, tmp_path, capsys):
    from wismo import cli

    (tmp_path / "ours.json").write_text(json.dumps(measured))
    out = tmp_path / "peers.json"
    assert cli.main(["peers", str(out), f"tokenserver 1.0={tmp_path / 'ours.json'}"]) == 0
    assert json.loads(out.read_text())["servers"] == {"tokenserver 1.0": measured}
    row = out.with_suffix(".txt").read_text().splitlines()[1].split()
    assert row[:6] == ["tokenserver", "1.0", "4", "238", "187", "439"] and "plan_route" in row
    assert cli.main(["peers", str(out), "no-equals-sign"]) == 2 and "expected LABEL=FILE" in capsys.readouterr().err
