"""Recorded runs: the shipped ones verify, and every kind of tampering is named by `wismo verify`."""

import json
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from commands import wismo_argv
from wismo import runs
from wismo.core import atomic
from wismo.core.jsonfmt import stable
from wismo.runs import recording, summaries

SHIPPED = runs.find()
WISMO = str(Path(sys.executable).parent / "wismo")


def test_shipped_runs_are_36_scripted_cases_and_verify():
    assert SHIPPED, "data/runs holds no recorded run"
    chosen = [runs.load(f) for f in summaries.selected_runs(None)]
    scripted = [r for r in chosen if r.manifest["backend"] == "scripted"]
    assert sorted(r.manifest["design"] for r in scripted) == ["focused", "granular"]
    assert sum(r.manifest["totals"]["cases"] for r in scripted) == 36
    for run in scripted:
        assert run.manifest["repetitions"] == 3 and len(run.manifest["orders"]) == 6
        assert run.manifest["figures"] == {
            "tokens": "tiktoken-estimated",
            "tokenCounting": {
                "profile": "python",
                "method": "OpenAI cookbook, gpt-4o constants",
                "encoding": "o200k_base",
            },
            "elapsedMs": "measured",
            "modelledElapsedMs": "modelled",
        }
        # Call ids of a real model's length (the article's recorded id is 29 characters), none repeated within a
        # conversation (derived from it, so each repetition of a case has the same ones).
        for t in run.traces:
            ids = [i["call_id"] for q in t["requests"] for i in q["output"] if "call_id" in i]
            assert ids and all(len(i) == 29 and i.startswith("call_") for i in ids) and len(set(ids)) == len(ids)
    # Design order alternated between pairs.
    firsts = [d["first"] for d in scripted[0].manifest["designOrder"]]
    assert firsts[:4] == ["granular", "focused", "granular", "focused"]
    rows = summaries.case_rows(scripted)
    assert all(r["passed"] for r in rows) and all(not r["summaryFlags"] for r in rows)


@pytest.fixture
def copy(tmp_path):
    source = next(f for f in SHIPPED if "granular" in f.name)
    target = tmp_path / source.name
    shutil.copytree(source, target)
    return target


def _edit(folder: Path, name: str, change) -> None:
    path = folder / "traces" / name
    trace = json.loads(path.read_text())
    change(trace)
    path.write_text(stable(trace))


def test_verify_passes_an_untouched_copy(copy):
    assert runs.verify(copy) == []


def test_a_changed_token_count_is_named(copy):
    _edit(copy, "ORD-1004-r1.json", lambda t: t["requests"][1]["usage"].update(inputTokens=1))
    problems = runs.verify(copy)
    assert any("ORD-1004-r1.json: sha256 differs" in p for p in problems)
    assert any("totals.inputTokens" in p for p in problems)


def test_a_removed_turn_is_named(copy):
    _edit(copy, "ORD-1004-r1.json", lambda t: t["requests"].pop(1))
    problems = runs.verify(copy)
    assert any("totals.turns is 3 but the requests and calls give 2" in p for p in problems)
    assert any("has no result" in p or "answers no call" in p for p in problems)


def test_a_duplicated_call_id_is_named(copy):
    def dup(t):
        t["requests"][1]["output"][1]["call_id"] = t["requests"][1]["output"][0]["call_id"]

    _edit(copy, "ORD-1004-r1.json", dup)
    assert any("is used by more than one call" in p for p in runs.verify(copy))


def test_an_orphaned_call_id_is_named(copy):
    def orphan(t):
        t["requests"][2]["newItems"][-1]["call_id"] = "call_999"

    _edit(copy, "ORD-1004-r1.json", orphan)
    problems = runs.verify(copy)
    assert any("call_999 answers no call (orphaned)" in p for p in problems)


def test_a_changed_transcript_is_named(copy):
    _edit(copy, "ORD-1002-r2.json", lambda t: t["requests"][2]["newItems"][-1].update(output='{"status":"delivered"}'))
    problems = runs.verify(copy)
    assert any("ORD-1002-r2.json: sha256 differs" in p for p in problems)
    assert any("says" in p and "bytes but its result has" in p for p in problems)


def test_an_unlisted_file_and_a_missing_file_are_named(copy):
    (copy / "traces" / "extra.json").write_text("{}")
    (copy / "traces" / "ORD-1001-r1.json").unlink()
    problems = runs.verify(copy)
    assert "traces/extra.json: in the folder but not covered by the manifest" in problems
    assert "traces/ORD-1001-r1.json: listed in the manifest but missing" in problems


@pytest.mark.slow
def test_summaries_refuse_an_unverified_run_and_the_command_exits_non_zero(copy):
    _edit(copy, "ORD-1004-r1.json", lambda t: t["totals"].update(toolCalls=4))
    with pytest.raises(runs.RunInvalid, match="does not verify"):
        runs.load(copy)
    done = subprocess.run(wismo_argv("verify", str(copy)), capture_output=True, text=True)
    assert done.returncode == 1 and "totals.toolCalls is 4" in done.stdout
    ok = subprocess.run(wismo_argv("verify", str(SHIPPED[0])), capture_output=True, text=True)
    assert ok.returncode == 0 and "verified" in ok.stdout


def test_outcomes_are_counted_per_design():
    rows = [
        {"design": d, "outcome": o}
        for d, o in [
            ("focused", "answered"),
            ("granular", "request timed out"),
            ("granular", "answered"),
            ("granular", "answered"),
            ("focused", "answered"),
        ]
    ]
    assert summaries.outcomes(rows) == [
        {"design": "granular", "outcome": "answered", "count": 2},
        {"design": "granular", "outcome": "request timed out", "count": 1},
        {"design": "focused", "outcome": "answered", "count": 2},
    ]
    assert summaries.outcomes([]) == []


@pytest.mark.parametrize(
    "argv, sentence",
    [
        (["granular", "0"], "wismo evaluate: repetitions must be at least 1, not 0\n"),
        (
            ["both", "1", "--orders", "ORD-1004", "ORD-9999"],
            "wismo evaluate: not a case of the study: ORD-9999; the cases are ORD-1001,",
        ),
        (
            ["focused", "1", "--orders", "ORD-1004", "ORD-1004"],
            "wismo evaluate: case ORD-1004 is listed more than once;",
        ),
    ],
)
def test_evaluate_refuses_a_run_it_cannot_record_before_writing_anything(tmp_path, capsys, argv, sentence):
    from wismo import cli

    assert cli.main(["evaluate", *argv, "--runs-dir", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(sentence) and err.count("\n") == 1
    assert not (tmp_path / "runs").exists()


def test_evaluate_moves_a_run_into_place_only_once_it_verifies(tmp_path, capsys, monkeypatch):
    from wismo import cli

    assert cli.main(["evaluate", "focused", "1", "--orders", "ORD-1004", "--runs-dir", str(tmp_path)]) == 0
    (folder,) = tmp_path.iterdir()
    assert (
        folder.name.startswith("scripted-focused-")
        and runs.verify(folder) == []
        and "verified" in capsys.readouterr().out
    )
    monkeypatch.setattr(recording, "verify", lambda f: ["traces/x.json: made up for the test"])
    assert cli.main(["evaluate", "granular", "1", "--orders", "ORD-1004", "--runs-dir", str(tmp_path)]) == 1
    assert (
        "the granular run just recorded does not verify, so nothing was kept: traces/x.json" in capsys.readouterr().err
    )
    assert list(tmp_path.iterdir()) == [folder]


def _sigint_default() -> None:
    """In the child before it runs: SIGINT's default disposition, whatever the suite's own was (no import here: the
    child of a process with threads must not take the import lock)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _sigint(pid: int, thread: str) -> None:
    """SIGINT to the process, or to one of its threads other than the main one (tgkill): the kernel may hand a
    process's signal to any thread that does not block it, and Python runs its handlers on the main thread only."""
    import ctypes
    import os

    if thread == "the process":
        os.kill(pid, signal.SIGINT)
        return
    others = sorted(int(t) for t in os.listdir(f"/proc/{pid}/task") if int(t) != pid)
    assert others, "wismo evaluate had no thread but its main one"
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.tgkill(pid, others[-1], signal.SIGINT) == 0, ctypes.get_errno()


@pytest.mark.slow
@pytest.mark.parametrize("thread", ["the process", "another thread"])
def test_ctrl_c_during_a_run_leaves_nothing_in_the_runs_folder(tmp_path, thread):
    import time

    from chatserver import ChatServer, Turn, order_in, tool_outputs
    from replay import Answer

    answer = json.dumps(
        {
            "deliveredSkus": [],
            "outstandingSkus": [],
            "delayReasons": [],
            "deliveryEstimate": None,
            "missingEvidence": [],
            "customerSummary": ".",
        }
    )

    def step(path, body):
        if order_in(path, body) == "ORD-1002":
            return Answer(200, {}, delay_s=30)  # the second conversation hangs until interrupted
        return (
            Turn(text=answer)
            if tool_outputs(path, body)
            else Turn(calls=[("get_order_support_context", {"orderId": "ORD-1001"}, "c1")])
        )

    with ChatServer(step) as server:
        proc = subprocess.Popen(
            [
                WISMO,
                "evaluate",
                "focused",
                "1",
                "some-model",
                "openai-chat",
                "--base-url",
                server.url + "/v1",
                "--orders",
                "ORD-1001",
                "ORD-1002",
                "--runs-dir",
                str(tmp_path),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            # Ctrl-C as a terminal gives it, even when the suite itself runs as a background job, whose children
            # inherit SIGINT ignored (and a command that finds it ignored keeps it so, as asyncio's Runner does).
            preexec_fn=_sigint_default,
        )
        deadline = time.monotonic() + 60
        while len(server.requests) < 3 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        staged = [p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.json")]
        _sigint(proc.pid, thread)
        out, err = proc.communicate(timeout=20)  # the model's answer would come after 30 s
    assert len(server.requests) == 3 and len(staged) == 1  # the first conversation's trace was on disk
    assert (
        staged[0].startswith(".")
        and atomic.MARK in staged[0].split("/")[0]
        and staged[0].endswith("/traces/ORD-1001-r1.json")
    )
    assert proc.returncode == 130 and "wismo evaluate: interrupted; nothing was written to" in err
    assert list(tmp_path.iterdir()) == []


def test_runs_of_different_repetitions_are_shown_apart_not_compared(tmp_path):
    # The README's `wismo evaluate focused 1` beside the shipped three-repetition granular run: both real runs.
    from wismo import cli
    from wismo.reports import recorded_runs, run_costs, sentences
    from wismo.reports.render import tables

    runs_dir = tmp_path / "runs"
    granular = next(f for f in SHIPPED if "granular" in f.name)
    shutil.copytree(granular, runs_dir / granular.name)
    assert cli.main(["evaluate", "focused", "1", "--orders", "ORD-1004", "--runs-dir", str(runs_dir)]) == 0
    focused = next(f.name for f in runs_dir.iterdir() if f.name.startswith("scripted-focused-"))
    result = recorded_runs.build({"runs_dir": str(runs_dir), "output_dir": str(tmp_path / "out")})
    (group,) = result["groups"]
    assert group["comparable"] is False
    assert [d["property"] for d in group["differences"]] == ["repetitions", "latency model"]
    # No saving or median change across them, anywhere.
    assert all(m["focused vs granular %"] is None for m in group["medians"])
    ours = [r for r in group["againstPublished"] if r["figure"].startswith("focused against granular:")]
    assert ours and all(r["wismo"] is None for r in ours)
    said = sentences.medians_sentence(group)
    assert said.count(".") >= 1 and said.rstrip(".").count(". ") == 0  # one sentence
    assert granular.name in said and focused in said
    assert "repetitions (3 for granular against 1 for focused)" in said and "latency model (" in said
    assert "no saving or median change is computed" in said and "%" not in said
    assert "no saving is computed across them" in run_costs.cost_answer(group) and "%" not in run_costs.cost_answer(
        group
    )
    assert all("focused against granular" not in row for row in recorded_runs.medians_table(group))
    # Each kind is said once, and no nan reaches the reader.
    assert group["kinds"]["tokens"].count("tiktoken-estimated") == 1
    for rows in (recorded_runs.medians_table(group), group["againstPublished"], group["runs"]):
        cells = re.findall(r"<td[^>]*>([^<]*)</td>", tables.show(rows).to_html())
        assert "nan" not in cells
    counts = [r for r in recorded_runs.medians_table(group) if "(count)" in r["median per conversation"]]
    assert [(r["granular"], r["focused"]) for r in counts] == [(3, 2), (4, 1)]
    assert all(type(v) is int for r in counts for v in (r["granular"], r["focused"]))


def test_runs_that_share_repetitions_and_latency_model_are_compared():
    chosen = [runs.load(f) for f in summaries.selected_runs(None) if f.name.startswith("scripted-")]
    assert summaries.differences([r.manifest for r in chosen]) == []
    rows = summaries.case_rows(chosen)
    assert all(m["focused vs granular %"] is not None for m in summaries.medians(rows, "granular") if m["granular"])


def test_the_recorded_trace_type_has_the_trace_schemas_fields_and_requirements():
    from wismo.runs import RecordedTrace, schema

    declared = schema("trace")
    fields = RecordedTrace.__annotations__  # strings: the module postpones annotations, so read them as written
    assert set(fields) == set(declared["properties"])
    written = {k: getattr(v, "__forward_arg__", v) for k, v in fields.items()}
    assert {k for k, v in written.items() if not str(v).startswith("NotRequired[")} == set(declared["required"])


def test_the_fast_and_the_naming_schema_validators_give_the_same_verdicts():
    # verify() asks fastjsonschema first and jsonschema only for a value it finds invalid: they must agree on every
    # shipped trace and manifest, and on each of them broken one field at a time.
    import copy

    import fastjsonschema

    from wismo.runs import store

    def paths(value, at=()):
        if isinstance(value, dict):
            for k, v in value.items():
                yield (*at, k)
                yield from paths(v, (*at, k))
        elif isinstance(value, list) and value:
            yield (*at, 0)
            yield from paths(value[0], (*at, 0))

    def broken(value):
        for path in paths(value):
            for replacement in (None, "x", 1, -1, 1.5, True, [], {}, "DELETE"):
                copied = copy.deepcopy(value)
                parent = copied
                for part in path[:-1]:
                    parent = parent[part]
                if replacement == "DELETE":
                    if isinstance(parent, dict):
                        del parent[path[-1]]
                    else:
                        parent.pop(path[-1])
                else:
                    parent[path[-1]] = replacement
                yield copied

    checked = disagreements = 0
    for folder in sorted(p for p in runs.RUNS.glob("*") if (p / "manifest.json").exists())[:2]:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        first = json.loads((folder / manifest["files"][0]["path"]).read_text(encoding="utf-8"))
        for kind, value in (("manifest", manifest), ("trace", first)):
            fast, named = store._fast(kind, None), store._named(kind, None)
            for candidate in [value, *broken(value)]:
                try:
                    fast(candidate)
                    fast_valid = True
                except fastjsonschema.JsonSchemaException:
                    fast_valid = False
                checked += 1
                disagreements += fast_valid != (not list(named.iter_errors(candidate)))
    assert checked > 1000 and disagreements == 0
