"""Two runs of every report on the same inputs write byte-identical JSON, apart from timing fields."""

import importlib
import inspect
import json

import anyio
import pytest

from wismo import determinism
from wismo.jsonfmt import stable
from wismo.paths import NOTEBOOKS
from wismo.reports import REPORTS


def test_first_difference_names_the_field():
    a = {"cases": [{"bytes": 1, "timings": {"ms": 3.2}}], "timings": {"x": 1}}
    b = {"cases": [{"bytes": 2, "timings": {"ms": 9.9}}], "timings": {"x": 2}}
    assert determinism.first_difference(a, b) == "cases[0].bytes"
    assert determinism.first_difference(a, {**a, "timings": {"x": 5}}) is None
    assert determinism.first_difference([1], [1, 2]) == "<root> (length 1 vs 2)"


def test_every_notebook_has_its_report_module():
    assert sorted(REPORTS) == sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb"))


@pytest.mark.slow
def test_two_runs_of_every_report_agree(built_reports, tmp_path):
    # The session's shared build (papermill) is the first run; the second builds every report's JSON in process.
    for module_name, _ in REPORTS.values():
        build = importlib.import_module(module_name).build
        if inspect.iscoroutinefunction(build):
            anyio.run(build, {"output_dir": str(tmp_path)})
        else:
            build({"output_dir": str(tmp_path)})
    differences = determinism.compare_folders(built_reports.out, tmp_path)
    assert set(differences) >= {output for _, output in REPORTS.values()}, differences
    assert all(d is None for d in differences.values()), differences
    for name in differences:
        a = determinism.without_timings(json.loads((built_reports.out / name).read_text()))
        b = determinism.without_timings(json.loads((tmp_path / name).read_text()))
        assert stable(a) == stable(b), name
