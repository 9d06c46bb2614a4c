"""The benchmark: its statistics, a smoke run of every benchmark with tiny counts (no timing is asserted), and
the non-threaded stdio transport it measures (stray output, pipelining, partial lines, large answers, EOF)."""

import json
import os
import select
import subprocess
import sys
import time

import pytest

from wismo import cli
from wismo.bench import floors, importtime, parallel, stats, suite
from wismo.bench import traces as bench_traces
from wismo.bench.settings import Settings
from wismo.bench.table import table
from wismo.core import processes
from wismo.core.jsonfmt import write_stable
from wismo.core.paths import REPO_ROOT
from wismo.mcp.client import raw as rawclient
from wismo.mcp.client.raw import RawServer
from wismo.mcp.servers.protocol import PINNED_REVISION

# The transport's and the parallel load's tests start real server processes, none forked by the test suite (the smoke,
# a module fixture and so set up before this, runs on the forks: see its fixture).
pytestmark = pytest.mark.usefixtures("real_servers")

# Statistics


def test_median_and_p95_interpolate_between_closest_ranks():
    assert stats.median([3, 1, 2]) == 2
    assert stats.median([4, 1, 3, 2]) == 2.5
    assert stats.median([7.5]) == 7.5
    assert stats.p95(list(range(1, 101))) == pytest.approx(95.05)
    assert stats.p95([1, 2]) == pytest.approx(1.95)
    assert stats.p95([5]) == 5
    assert stats.quantile([10, 20, 30], 0) == 10 and stats.quantile([10, 20, 30], 1) == 30
    assert stats.median([2, 2, 2, 100]) == 2  # robust to one outlier
    samples = [0.9, 0.3, 0.5, 0.1, 0.7]
    assert stats.median(samples) == 0.5 and samples == [0.9, 0.3, 0.5, 0.1, 0.7], "the input is not reordered"


def test_statistics_refuse_what_they_cannot_summarise():
    with pytest.raises(ValueError, match="no samples"):
        stats.median([])
    with pytest.raises(ValueError, match="outside 0..1"):
        stats.quantile([1, 2], 1.5)


def test_summary_ratio_and_target_verdicts():
    assert stats.summary([1.0, 2.0, 3.0, 4.0]) == {
        "unit": "ms",
        "n": 4,
        "median": 2.5,
        "p95": 3.85,
        "min": 1.0,
        "max": 4.0,
    }
    assert stats.summary([1.23456, 1.23456], unit="s", digits=2)["median"] == 1.23
    assert stats.ratio(1.0, 0.25) == 4.0 and stats.ratio(1.0, 0.0) is None
    asked = []
    met = stats.check("stdio round trip", 0.4, lambda: asked.append(1) or "unused")
    assert met == {"target": "stdio round trip", "targetMs": 0.5, "medianMs": 0.4, "met": True} and not asked
    missed = stats.check("comparison, all cases, both designs", 750.0, lambda: "imports")
    assert missed["met"] is False and missed["missedByMs"] == 250.0 and missed["missedByPercent"] == 50.0
    assert missed["why"] == "imports"


def test_memory_and_ratio_targets_give_the_same_verdict_shape():
    assert stats.check_memory("10,000-line order, peak memory", 120.0, lambda: "unused")["met"] is True
    missed = stats.check_memory("10,000-line order, peak memory", 450.0, lambda: "held at once")
    assert missed["missedByMb"] == 150.0 and missed["missedByPercent"] == 50.0 and missed["why"] == "held at once"
    name = next(iter(stats.TARGETS_X_FLOOR))
    limit = stats.TARGETS_X_FLOOR[name]
    within = stats.check_ratio(name, limit * 1000.0, 1000.0, lambda: "unused")
    assert within["met"] is True and within["xFloor"] == limit and within["floorMs"] == 1000.0
    over = stats.check_ratio(name, 2 * limit * 1000.0, 1000.0, lambda: "cells")
    assert over["met"] is False and over["missedByXFloor"] == limit and over["missedByPercent"] == 100.0
    with pytest.raises(ValueError, match="floor"):
        stats.check_ratio(name, 1.0, 0.0, lambda: "")


def test_papermill_cell_durations_rank_the_heaviest_cells(tmp_path):
    from wismo.bench import report_build

    def executed(name, seconds):
        cells = [{"cell_type": "markdown", "metadata": {}, "source": "# title"}]
        cells += [
            {
                "cell_type": "code",
                "execution_count": i + 1,
                "metadata": {"papermill": {"duration": d}},
                "source": f"%matplotlib inline\nimport x\n\n# why\nstep_{i}()\nmore",
            }
            for i, d in enumerate(seconds)
        ]
        notebook = {"cells": cells, "metadata": {"papermill": {"duration": sum(seconds) + 1}}}
        (tmp_path / "notebooks").mkdir(exist_ok=True)
        (tmp_path / "notebooks" / f"{name}.ipynb").write_text(json.dumps(notebook))

    executed("01-a", [0.5, 3.0])
    executed("02-b", [2.0])
    durations = report_build.papermill_durations(tmp_path)
    # Cells are labelled by execution count (In [n]) and named by their first line that is not set-up.
    assert durations["01-a"]["seconds"] == 4.5 and durations["01-a"]["cells"][2] == {
        "seconds": 3.0,
        "firstLine": "step_1()",
    }
    assert report_build.first_statement(["%matplotlib inline\n", "import os\n"]) == "%matplotlib inline"
    slower = {
        name: {
            "seconds": nb["seconds"],
            "cells": {i: c | {"seconds": c["seconds"] * 2} for i, c in nb["cells"].items()},
        }
        for name, nb in durations.items()
    }
    ranked = report_build.heaviest_cells([durations, slower], top=2)
    assert [(c["notebook"], c["cell"], c["medianSeconds"]) for c in ranked] == [("01-a", 2, 4.5), ("02-b", 1, 3.0)]
    assert ranked[0]["firstLine"] == "step_1()"


def test_the_echo_floor_answers_one_line_and_refuses_an_unknown_mode():
    done = subprocess.run(floors.echo_command("once"), input=b'{"a":1}\n', capture_output=True, timeout=30)
    assert done.returncode == 0 and done.stdout == b'{"a":1}\n'
    wrong = subprocess.run(floors.echo_command("shout"), capture_output=True, timeout=30)
    assert wrong.returncode == 2 and b"usage" in wrong.stderr


def test_the_traces_ratios_pair_runs_taken_in_rounds(monkeypatch, tmp_path):
    # Every one-core way of reading is run once per round, so a ratio's two medians share the machine's drift.
    order: list[str] = []
    monkeypatch.setattr(bench_traces, "_measure", lambda path, mode, runs: order.append(mode) or [{"mode": mode}])
    found = bench_traces._rounds(3, (tmp_path / "f.json", "json"), (tmp_path / "f.json", "command"))
    assert order == ["json", "command"] * 3
    assert found == [[{"mode": "json"}] * 3, [{"mode": "command"}] * 3]


def test_the_command_is_timed_right_after_the_decode_it_is_held_to():
    # The command's target is a ratio to the decode: each round takes the two back to back, under the same drift.
    ways = bench_traces.ONE_CORE
    assert sorted(ways) == ["analysis", "command", "command-first", "json", "lines"]
    assert ways.index("command") == ways.index("json") + 1


def test_importtime_is_parsed_into_packages_and_heaviest_modules():
    stderr = (
        "import time: self [us] | cumulative | imported package\n"
        "import time:       100 |        100 |   _io\n"
        "import time:      2000 |       2100 | encodings\n"
        "import time:      5000 |       5000 |     mcp_types._types\n"
        "import time:       300 |       5300 |   mcp_types\n"
        "import time:       700 |       6000 | mcp\n"
        "something else on stderr\n"
    )
    rows = importtime.parse_importtime(stderr)
    assert rows[0] == ("_io", 1, 0.1, 0.1) and rows[-1] == ("mcp", 0, 0.7, 6.0)
    profile = importtime.import_profile(rows)
    assert profile["totalMs"] == 8.1  # the top-level cumulative times
    assert list(profile["selfMsByPackage"].items())[:2] == [("mcp_types", 5.3), ("encodings", 2.0)]
    assert next(iter(profile["heaviestModulesSelfMs"])) == "mcp_types._types"


# Smoke: every benchmark runs with tiny counts and returns the common shape (timings are not checked)


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    """Every benchmark once with tiny counts, on the suite's forked servers, which answer the same: the smoke asserts no
    time or memory figure, only that each benchmark runs and reports its figures beside a floor (its floors and probes
    are forked too: they run on `processes.interpreter()`, which is the real one in `make bench`). Only the start's
    -X importtime profile runs the real interpreter, as it always does: a fork imports nothing."""
    notebook = tmp_path_factory.mktemp("nb") / "tiny.ipynb"
    notebook.write_text(json.dumps(floors.EMPTY_NOTEBOOK), encoding="utf-8")
    settings = Settings.quick()
    settings.report_notebooks = (str(notebook),)  # the real `wismo report` runs every notebook: minutes
    assert os.environ.get(processes.INTERPRETER_ENV), "the smoke expects the suite's forked servers"
    return suite.run(settings=settings, progress=False)


def test_every_benchmark_runs_and_reports_figures_beside_a_floor(smoke):
    assert list(smoke["benchmarks"]) == list(suite.BENCHMARKS)
    for name, result in smoke["benchmarks"].items():
        assert result["title"] and result["figures"], name
        floors = [f for f in result["figures"] if f["floor"]]
        assert floors and all(f["vsFloor"] == 1.0 for f in floors), name
        for figure in result["figures"]:
            assert set(figure["stats"]) == {"unit", "n", "median", "p95", "min", "max"}, (name, figure["name"])
            assert figure["stats"]["n"] >= 1 and figure["stats"]["median"] > 0
    targets = {t["target"] for t in smoke["targets"]}
    kinds = (stats.TARGETS_MS, stats.TARGETS_MB, stats.TARGETS_X_FLOOR, stats.TARGETS_COUNT, stats.TARGETS_MEMORY_X)
    assert targets == {name for kind in kinds for name in kind}
    for t in smoke["targets"]:
        assert t["met"] or (t["missedByPercent"] > 0 and t["why"])
    traces = smoke["benchmarks"]["traces"]
    assert traces["conversations"]["large"] > traces["conversations"]["small"] > 0 and traces["megabytesPerSecond"] > 0
    assert traces["bytes"]["large"] >= 4 * traces["bytes"]["small"] * 0.9
    assert traces["speedUpOneToTwoWorkers"] > 0 and traces["megabytesPerSecondPerWorker"] > 0
    assert traces["timeAtGrowthAgainstOnce"] > 1  # four times the traces take longer
    # One long session at two lengths, every copy a question under one conversation id.
    assert traces["sessionQuestions"]["large"] > 2 * traces["sessionQuestions"]["small"] > 0
    session = {
        f["name"]: f["stats"]["median"] for f in smoke["benchmarks"]["traces"]["figures"] if "session" in f["name"]
    }
    (once, longer) = session.values()  # the ratio is the longer session's median against the shorter one's
    assert traces["sessionTimeAtGrowthAgainstOnce"] == round(longer / once, 2)
    assert set(traces["againstDecoding"]) == {
        "analysisOneCore",
        "commandOneCore",
        "commandFirstRunOneCore",
        "pipelineOneWorker",
        "pipelineTwoWorkers",
    }
    assert traces["peakRssMb"]["command"] > 0  # the whole command's own process, not the probe's
    assert traces["priceLibraryImported"] is False  # the price lookups kept by the warm-up, in the bench's own cache
    names = [t["target"] for t in traces["targets"]]
    assert "traces: the whole command, times decoding each line as JSON" in names
    large = smoke["benchmarks"]["largeOrder"]
    assert large["differences"] == 0 and large["resultBytes"] > 1_000_000 and large["peakRssMb"] > 0


def test_the_round_trips_cover_both_tools_both_clients_and_the_sdk_transport(smoke):
    names = [f["name"] for f in smoke["benchmarks"]["stdioRoundTrip"]["figures"]]
    for tool in ("get_order (granular)", "get_order_support_context (focused)"):
        assert f"{tool}, SDK client (harness)" in names and f"{tool}, raw client (server alone)" in names
        assert f"{tool}, SDK client (harness), SDK threaded stdio transport" in names
    http = smoke["benchmarks"]["httpRoundTrip"]["figures"]
    assert http[0]["name"] == "floor: raw HTTP/1.1 echo on 127.0.0.1" and len(http) == 5
    start = smoke["benchmarks"]["serverStart"]
    assert start["imports"]["totalMs"] > 0 and "mcp_types" in start["imports"]["selfMsByPackage"]
    comparison = smoke["benchmarks"]["comparison"]
    assert comparison["requestsPerPass"] > comparison["cases"] > 0
    assert smoke["benchmarks"]["report"]["notebooks"] == ["tiny"]


def test_the_parallel_load_pairs_each_load_with_one_client_alone_and_checks_every_answer(smoke):
    quick = Settings.quick()
    # The one client alone makes as many calls as all N together, round by round.
    calls = quick.parallel_rounds * quick.parallel_clients * quick.parallel_calls
    answers = quick.parallel_rounds * quick.parallel_clients * (quick.parallel_warmup + quick.parallel_calls)
    load = smoke["benchmarks"]["parallelLoad"]
    figures = load["figures"]
    assert [(f["transport"], f["clients"]) for f in figures] == [
        (t, n) for t in ("http", "stdio") for _ in quick.parallel_designs for n in (1, quick.parallel_clients)
    ]
    for alone, loaded in zip(figures[::2], figures[1::2]):
        assert alone["floor"] and not loaded["floor"] and alone["tool"] == loaded["tool"]
        assert loaded["vsFloor"] == stats.ratio(loaded["stats"]["median"], alone["stats"]["median"])
        assert loaded["stats"]["n"] == loaded["calls"] == alone["stats"]["n"] == alone["calls"] == calls
        assert loaded["answersChecked"] == answers and loaded["clients"] == quick.parallel_clients
        assert loaded["callsPerSecond"] > 0 and loaded["wallSeconds"] > 0 and loaded["wrongAnswers"] == 0
    assert load["answersChecked"] == sum(f["answersChecked"] for f in figures) and load["wrongAnswers"] == 0
    verdicts = {t["target"]: t for t in load["targets"]}
    assert set(verdicts) == set(parallel.TARGET.values()) | {parallel.WRONG}
    assert verdicts[parallel.WRONG] == {
        "target": parallel.WRONG,
        "targetCount": 0,
        "count": 0,
        "of": load["answersChecked"],
        "met": True,
    }


class AsksAnotherOrder(RawServer):
    """A stdio client that asks the server for ORD-1001 whatever it was told to ask: every answer is then wrong."""

    def call(self, tool, arguments):
        return super().call(tool, {"orderId": "ORD-1001"})


@pytest.mark.parametrize("session", [RawServer, AsksAnotherOrder])
def test_the_parallel_load_counts_an_answer_to_another_question_as_wrong(session):
    warmup, calls = 1, 3
    with session("focused", keep_stderr=False) as server:
        server.checked_handshake()
        pids, tool = [server.proc.pid], "get_order_support_context"
        phase = parallel.run_phase([server], pids, tool, ["ORD-1004"], warmup, calls)
    asked = warmup + calls
    assert phase.asked == asked and sum(len(c.answers) for c in phase.clients) == asked and phase.calls == calls
    if session is RawServer:
        assert phase.wrong == []
    else:
        assert phase.wrong == ["order 'ORD-1001' answered for ORD-1004"] * asked
        verdict = stats.check_count(parallel.WRONG, len(phase.wrong), asked, lambda: phase.wrong[0])
        assert verdict["met"] is False and verdict["missedByCount"] == asked and verdict["missedByPercent"] == 100.0


class Paced:
    """A session whose every call takes 50 ms and answers nothing: the phase's clock is all this test reads."""

    next_id = 0

    def call(self, tool, arguments):
        time.sleep(0.05)
        return 0.05, b""


def test_the_phase_clock_starts_before_the_first_timed_call_however_late_this_thread_wakes(monkeypatch):
    # The server CPU read before the timed calls stands for a thread the scheduler wakes late (as on a loaded
    # machine): read after the clients were released, the clock would start once their calls were done.
    reads = []

    def first_read_late(pids):
        reads.append(pids)
        if len(reads) == 1:
            time.sleep(0.3)

    monkeypatch.setattr(parallel, "_server_cpu", first_read_late)
    phase = parallel.run_phase([Paced(), Paced()], [1], "t", ["ORD-1004"], 0, 3)
    assert phase.calls == 6 and 0.15 <= phase.wall_s < 0.3 + 0.15, phase.wall_s


def test_an_answer_is_wrong_when_its_id_result_or_order_is_not_the_questions():
    def answer(text, request_id=2, is_error=False):
        result = {"content": [{"type": "text", "text": text}], "isError": is_error}
        return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()

    granular, focused = '{"orderId": "ORD-1004"}', '{"order": {"orderId": "ORD-1004"}}'
    assert parallel.wrong_answer(answer(granular), "ORD-1004", 2) is None
    assert parallel.wrong_answer(answer(focused), "ORD-1004", 2) is None
    assert parallel.wrong_answer(answer(focused), "ORD-1002", 2) == "order 'ORD-1004' answered for ORD-1002"
    assert parallel.wrong_answer(answer(granular, 3), "ORD-1004", 2) == "answer id 3 to request 2"
    assert parallel.wrong_answer(answer(granular, is_error=True), "ORD-1004", 2).startswith("an error result")
    assert parallel.wrong_answer(answer("Order ORD-1004 was not found."), "ORD-1004", 2).startswith("not a tool")
    assert parallel.wrong_answer(b'{"jsonrpc": "2.0", "id": 2, "error": {}}', "ORD-1004", 2).startswith("not a tool")


def test_bench_json_is_stable_and_the_table_prints(smoke, tmp_path):
    path = write_stable(tmp_path / "bench.json", smoke)
    text = path.read_text(encoding="utf-8")
    assert json.loads(text) == smoke and text == json.dumps(smoke, ensure_ascii=False, sort_keys=True, indent=2) + "\n"
    printed = table(smoke)
    for result in smoke["benchmarks"].values():
        assert result["title"] in printed
    assert "targets (medians" in printed and "stdio round trip" in printed


def test_main_runs_the_registry_writes_json_and_prints_a_table(monkeypatch, tmp_path, capsys):
    def fake(settings):
        assert settings.rounds == Settings.quick().rounds
        summary = stats.summary([1.0, 2.0])
        return {
            "title": "0. a fake",
            "figures": [{"name": "floor", "floor": True, "stats": summary, "vsFloor": 1.0}],
            "targets": [],
        }

    monkeypatch.setattr(suite, "BENCHMARKS", {"fake": fake})
    assert cli.main(["bench", "--quick", "--out", str(tmp_path / "b.json")]) == 0
    written = json.loads((tmp_path / "b.json").read_text())
    assert written["benchmarks"]["fake"]["title"] == "0. a fake" and written["allTargetsMet"] is True
    assert "0. a fake" in capsys.readouterr().out


# The non-threaded stdio transport (wismo.mcp.servers.stdio_fast) under the SDK's own server loop

TEST_SERVER = r"""
import os, sys
import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from wismo.mcp.servers import stdio_fast
from wismo.mcp.servers.app import serve_handshake_loop

async def on_call_tool(ctx, params):
    if params.name == "shout":
        print("stray print from a handler")
        sys.stdout.flush()
        os.write(1, b"stray bytes on fd 1\n")
        return types.CallToolResult(content=[types.TextContent(text="shouted")])
    if params.name == "big":
        return types.CallToolResult(content=[types.TextContent(text="\u00e9" * int(params.arguments["n"]))])
    return types.CallToolResult(content=[types.TextContent(text=str(params.arguments))])

server = Server("fast-test", on_call_tool=on_call_tool)

async def main():
    assert stdio_fast.usable(), "stdin and stdout are pipes here"
    async with stdio_fast.stdio_server() as (read_stream, write_stream):
        async with server.lifespan(server) as state:
            # The loop wismo's own servers run: the handshake era, a JSON-RPC error for a line that is not JSON.
            await serve_handshake_loop(server, read_stream, write_stream, state)
    os.write(1, b"after\n")  # fd 1 is the wire again once the transport is done

anyio.run(main)
"""


class FastServer(RawServer):
    def __init__(self):
        super().__init__(
            "fast-test",
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            command=[sys.executable, "-c", TEST_SERVER],
        )

    def call(self, name, arguments):
        return self.request("tools/call", {"name": name, "arguments": arguments})


def test_stray_output_goes_to_stderr_and_never_onto_the_wire():
    server = FastServer()
    try:
        assert server.handshake()["result"]["protocolVersion"] == PINNED_REVISION
        answer = server.call("shout", {})
        assert answer["result"]["content"][0]["text"] == "shouted"
        assert server.call("echo", {"k": 1})["result"]["content"][0]["text"] == "{'k': 1}"
    finally:
        server.proc.stdin.close()
        assert server.proc.wait(10) == 0
    rest, err = rawclient.rest(server.proc.stdout), server.proc.stderr.read()
    assert rest == b"after\n", "nothing but answers reached stdout while serving"
    assert b"stray print from a handler" in err and b"stray bytes on fd 1" in err
    server.proc.stdout.close(), server.proc.stderr.close()


def test_pipelined_requests_partial_lines_bad_lines_and_a_last_line_without_newline():
    server = FastServer()
    server.handshake()
    calls = [
        json.dumps(
            {"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call", "params": {"name": "echo", "arguments": {"i": i}}}
        )
        for i in range(3)
    ]
    # Three requests and a line that is not JSON in one write, then one request split across three writes.
    server.proc.stdin.write(("\n".join(calls[:2]) + "\nnot json at all\n" + calls[2] + "\n").encode())
    server.proc.stdin.flush()
    answers = [server.recv() for _ in range(4)]
    assert sorted(a["id"] for a in answers if a["id"] is not None) == [10, 11, 12]
    (refused,) = [a for a in answers if a["id"] is None]
    assert refused["error"]["code"] == -32700  # the line that is not JSON is answered, not dropped
    last = json.dumps(
        {"jsonrpc": "2.0", "id": 20, "method": "tools/call", "params": {"name": "echo", "arguments": {"x": "é"}}}
    ).encode()
    for part in (last[:7], last[7:40], last[40:]):
        server.proc.stdin.write(part)
        server.proc.stdin.flush()
        ready, _, _ = select.select([server.proc.stdout], [], [], 0.05)
        assert not ready, "nothing is answered before the line is complete"
    server.proc.stdin.write(b"\n")
    server.proc.stdin.flush()
    assert server.recv()["id"] == 20
    # A final request with no newline before end of input is still answered, then the server exits cleanly.
    server.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 21, "method": "ping"}).encode())
    server.proc.stdin.close()
    last_answer = server.recv()
    assert last_answer["id"] == 21 and "result" in last_answer
    assert server.proc.wait(10) == 0
    server.proc.stdout.close(), server.proc.stderr.close()


def test_an_answer_larger_than_the_pipe_buffer_arrives_whole():
    with FastServer() as server:
        server.handshake()
        n = 3_000_000  # 6 MB of UTF-8: many times the pipe buffer and the write high-water mark
        text = server.call("big", {"n": n})["result"]["content"][0]["text"]
        assert len(text) == n and set(text) == {"é"}
        assert server.call("echo", {})["result"]["content"][0]["text"] == "{}"


@pytest.mark.parametrize("transport", ["wismo", "sdk"])
def test_both_stdio_transports_keep_the_pin(transport):
    # WISMO_STDIO_TRANSPORT=sdk selects the SDK's own threaded transport (the benchmark's in-run "before").
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"} | (
        {"WISMO_STDIO_TRANSPORT": "sdk"} if transport == "sdk" else {}
    )
    with RawServer("focused", env=env) as server:
        refused = server.request(
            "server/discover", {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}
        )
        assert refused["error"]["code"] == -32022
        assert server.handshake("2025-06-18")["result"]["protocolVersion"] == PINNED_REVISION
        answer = server.request(
            "tools/call", {"name": "get_order_support_context", "arguments": {"orderId": "ORD-1004"}}
        )
        assert json.loads(answer["result"]["content"][0]["text"])["order"]["orderId"] == "ORD-1004"


def test_a_memory_ratio_target_gives_its_verdict_and_both_peaks():
    name = next(iter(stats.TARGETS_MEMORY_X))
    within = stats.check_memory_ratio(name, 110.0, 100.0, lambda: "unused")
    assert within == {
        "target": name,
        "targetX": stats.TARGETS_MEMORY_X[name],
        "xSmaller": 1.1,
        "met": True,
        "peakMb": 110.0,
        "smallerPeakMb": 100.0,
    }
    over = stats.check_memory_ratio(name, 400.0, 100.0, lambda: "grows with the file")
    assert over["met"] is False and over["missedByX"] == 2.75 and over["why"] == "grows with the file"
    assert "4.00x  target" in table({"benchmarks": {}, "loadAverage": {"atStart": 0, "atEnd": 0}, "targets": [over]})


def test_a_probes_peak_memory_is_its_own_not_its_parents():
    # getrusage's ru_maxrss keeps the forking process's peak across exec; /proc's VmHWM starts afresh.
    code = "from wismo.bench.procfs import peak_rss_mb; print(peak_rss_mb())"
    ballast = bytearray(200_000_000)  # this process's peak is above 200 MB
    child = float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert 5 < child < 100 and len(ballast)


def test_the_command_runs_with_the_price_cache_it_was_given_and_its_first_run_with_none(tmp_path, monkeypatch):
    from wismo.accounting.cost import price_cache
    from wismo.bench import traces_probe

    cache = tmp_path / "cache"
    monkeypatch.setenv(price_cache.CACHE_ENV, str(cache))
    shipped = str(REPO_ROOT / "data" / "traces" / "granular.json")
    traces_probe.main("command-first", [shipped])
    assert not cache.exists()  # its cache was a folder of its own, empty, removed with it
    traces_probe.main("command", [shipped])
    assert list(cache.glob("prices-genai-prices-*.jsonl"))
