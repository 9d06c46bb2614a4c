"""Recorded runs: the shipped ones verify, and every kind of tampering is named by `wismo verify`."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wismo import runs, summaries
from wismo.jsonfmt import stable

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
        assert run.manifest["figures"] == {"tokens": "tiktoken-estimated", "elapsedMs": "measured", "modelledElapsedMs": "modelled"}
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


def test_summaries_refuse_an_unverified_run_and_the_command_exits_non_zero(copy):
    _edit(copy, "ORD-1004-r1.json", lambda t: t["totals"].update(toolCalls=4))
    with pytest.raises(runs.RunInvalid, match="does not verify"):
        runs.load(copy)
    done = subprocess.run([WISMO, "verify", str(copy)], capture_output=True, text=True)
    assert done.returncode == 1 and "totals.toolCalls is 4" in done.stdout
    ok = subprocess.run([WISMO, "verify", str(SHIPPED[0])], capture_output=True, text=True)
    assert ok.returncode == 0 and "verified" in ok.stdout
