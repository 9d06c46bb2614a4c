"""The reports' parameters: each checked against its declaration before anything runs, every refusal one
sentence naming the parameter, the value and what is allowed; a list given as a JSON string (papermill's -p) parsed."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from wismo.core import processes
from wismo.core.paths import OUTPUTS, REPO_ROOT, OutputsProtected, report_dir
from wismo.reports import context_cost, equivalence, recorded_runs, scale
from wismo.reports.params import EARLIER, ParameterError

ONE_SENTENCE = r"^[^\n]*\.$"


@pytest.mark.parametrize(
    ("report", "params", "name", "says"),
    [
        (context_cost, {"models": "gpt-4.1"}, "models", "-y 'models:"),  # a bare string is not a list
        (context_cost, {"encoding": "nope"}, "encoding", "one of o200k_base, cl100k_base"),
        (context_cost, {"profile": "csharp"}, "profile", "one of python"),
        (context_cost, {"models": ["no-such-model-x"]}, "models", "every model must have a price"),
        (context_cost, {"orders": ["ORD-9999"]}, "orders", "the cases are ORD-1001"),
        (equivalence, {"orders": '["ORD-9999"]'}, "orders", "the cases are ORD-1001"),  # parsed, then refused
        (equivalence, {"orders": "ORD-1004"}, "orders", "a list of strings"),
        (equivalence, {"transports": ["carrier-pigeon"]}, "transports", "from stdio, http"),
        (equivalence, {"include_unfriendly": "yes"}, "include_unfriendly", "true or false"),
        (scale, {"sizes": [0]}, "sizes", "whole numbers of at least 1"),
        (scale, {"sizes": 100}, "sizes", "a list of whole numbers"),
        (scale, {"cap": -5}, "cap", "a whole number of at least 1"),
        (recorded_runs, {"price_date": "yesterday"}, "price_date", "an ISO date"),
    ],
)
def test_a_bad_parameter_is_one_sentence_naming_it_before_anything_runs(report, params, name, says):
    started = time.perf_counter()
    with pytest.raises(ParameterError) as err:
        report.checked(params)
    assert err.value.name == name and says in str(err.value), str(err.value)
    assert "\n" not in str(err.value) and str(err.value).endswith(".")
    # What a notebook shows: the sentence, and that the cells below are an earlier run's.
    assert err.value._render_traceback_() == [f"ParameterError: {err.value}", EARLIER]
    assert time.perf_counter() - started < 5  # no server was started to find out


def test_a_list_given_as_a_json_string_is_parsed():
    p = equivalence.checked({"orders": '["ORD-1004"]', "transports": '["stdio"]'})
    assert p["orders"] == ["ORD-1004"] and p["transports"] == ["stdio"]
    assert context_cost.checked({"scale_sizes": "[]"})["scale_sizes"] == []


def test_reports_write_outside_outputs_unless_the_build_asked(monkeypatch, tmp_path):
    monkeypatch.delenv("WISMO_REPORT_BUILD", raising=False)
    assert OUTPUTS not in report_dir(None).parents and report_dir(None) != OUTPUTS
    with pytest.raises(OutputsProtected, match="only the report build"):
        report_dir("outputs")
    assert report_dir(str(tmp_path)) == tmp_path
    monkeypatch.setenv("WISMO_REPORT_BUILD", str(OUTPUTS))
    assert report_dir(None) == OUTPUTS and report_dir("outputs") == OUTPUTS


def _listing() -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(OUTPUTS)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in OUTPUTS.rglob("*")
        if "screenshots" not in p.parts and ".measurements" not in p.parts
    }


@pytest.mark.slow
def test_a_notebook_run_by_hand_with_parameters_leaves_outputs_as_it_was(tmp_path):
    before = _listing()
    env = {k: v for k, v in os.environ.items() if k != "WISMO_REPORT_BUILD"}
    done = subprocess.run(
        [processes.interpreter(), "-m", "papermill", "notebooks/01-equivalence.ipynb", str(tmp_path / "x.ipynb"),
         "-y", "{orders: [ORD-1004], transports: [stdio]}", "--cwd", "notebooks"],
        capture_output=True, text=True, cwd=REPO_ROOT, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert _listing() == before
    # Its last cell names the folder of this run's own, which holds what it wrote.
    executed = json.loads((tmp_path / "x.ipynb").read_text(encoding="utf-8"))
    said = "".join(executed["cells"][-1]["outputs"][0]["data"]["text/markdown"])
    folder = Path(re.search(r"`([^`]+)`", said).group(1))
    assert folder.name.startswith("equivalence-") and (folder / "deterministic-comparison.json").is_file(), said
    assert not folder.resolve().is_relative_to(OUTPUTS.resolve())
    # One case reads as one: "1/1 case", "in 1 call", never "the 1 cases".
    shown = " ".join(
        "".join(o.get("data", {}).get("text/markdown", "")) for c in executed["cells"] for o in c.get("outputs", [])
    )
    wrong = re.findall(r"(?<![\d.,])1 (?:cases|calls|MCP calls|tool calls)\b|1/1 cases", shown)
    assert "1/1 case" in shown and not wrong, wrong
    bad = subprocess.run(
        [processes.interpreter(), "-m", "papermill", "notebooks/04-scale.ipynb", str(tmp_path / "y.ipynb"), "-y",
         "{sizes: [0]}", "--cwd", "notebooks"],
        capture_output=True, text=True, cwd=REPO_ROOT, env=env, timeout=300,
    )  # fmt: skip
    assert bad.returncode != 0
    executed = json.loads((tmp_path / "y.ipynb").read_text(encoding="utf-8"))
    errors = [o for c in executed["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert len(errors) == 1 and errors[0]["traceback"] == [
        "ParameterError: the scale report: parameter sizes = [0] is not allowed; it must be a list of whole numbers "
        "of at least 1 (give lists and tables with papermill's -y, for example -y 'sizes: [1, 10]').",
        "The cells below this one still show an earlier run's results: this run stopped here.",
    ], errors
    assert _listing() == before


def test_each_run_by_hand_gets_a_folder_of_its_own(monkeypatch):
    monkeypatch.delenv("WISMO_REPORT_BUILD", raising=False)
    first, second = (equivalence.checked({"orders": ["ORD-1004"]})["output_dir"] for _ in range(2))
    assert first != second and Path(first).is_dir() and Path(second).is_dir()
    assert Path(first).parent == Path(second).parent and Path(first).name.startswith("equivalence-")
    monkeypatch.setenv("WISMO_REPORT_BUILD", "/the/build")
    assert equivalence.checked({"orders": ["ORD-1004"]})["output_dir"] is None  # the build writes into its own


def test_each_notebooks_parameters_cell_is_its_report_modules_declaration():
    # The report module declares a notebook's parameters once (name, default, kind); the parameters cell papermill
    # fills must name exactly those, with the same defaults, so neither can drift from the other.
    import ast
    import importlib
    import json

    from wismo.core.paths import NOTEBOOKS
    from wismo.reports import REPORTS

    for stem, (module, _) in REPORTS.items():
        declared = importlib.import_module(module).PARAMETERS
        cells = json.loads((NOTEBOOKS / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]
        (cell,) = [c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])]
        assigned = {
            node.targets[0].id: node.value
            for node in ast.parse("".join(cell["source"])).body
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
        }
        assert set(assigned) == set(declared), (stem, set(assigned) ^ set(declared))
        for name, value in assigned.items():
            try:
                stored = ast.literal_eval(value)
            except ValueError:
                continue  # a default computed in the cell (a constant's name): the module's check reads it
            assert stored == declared[name].default, (stem, name, stored, declared[name].default)
