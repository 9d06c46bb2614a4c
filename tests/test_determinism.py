"""Two runs of every report on the same inputs write byte-identical JSON, apart from timing fields."""

import importlib
import inspect
import json

import anyio
import pytest

from wismo.checks import determinism
from wismo.core.jsonfmt import stable
from wismo.core.paths import NOTEBOOKS
from wismo.reports import REPORTS


def test_first_difference_names_the_field():
    a = {"cases": [{"bytes": 1, "timings": {"ms": 3.2}}], "timings": {"x": 1}}
    b = {"cases": [{"bytes": 2, "timings": {"ms": 9.9}}], "timings": {"x": 2}}
    assert determinism.first_difference(a, b) == "cases[0].bytes"
    assert determinism.first_difference(a, {**a, "timings": {"x": 5}}) is None
    assert determinism.first_difference([1], [1, 2]) == "<root> (length 1 vs 2)"


def test_every_notebook_has_its_report_module():
    assert sorted(REPORTS) == sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb"))


# Small inputs keep two in-process builds of every report quick; determinism does not depend on the sizes.
QUICK = {
    "01-equivalence": {"transports": ["stdio"]},
    "02-context-cost": {"scale_sizes": [1, 10]},
    "04-scale": {"sizes": [1, 10], "budget_sizes": [10]},
}


def _build(module_name: str, params: dict) -> None:
    build = importlib.import_module(module_name).build
    if inspect.iscoroutinefunction(build):
        anyio.run(build, params)
    else:
        build(params)


@pytest.mark.slow
def test_two_runs_of_every_report_agree(tmp_path):
    runs = [tmp_path / "first", tmp_path / "second"]
    for stem, (module_name, _) in REPORTS.items():
        for folder in runs:
            _build(module_name, {**QUICK.get(stem, {}), "output_dir": str(folder)})
    differences = determinism.compare_folders(*runs)
    assert set(differences) == {output for _, output in REPORTS.values()}, differences
    assert all(d is None for d in differences.values()), differences
    for name in differences:
        a = determinism.without_timings(json.loads((runs[0] / name).read_text()))
        b = determinism.without_timings(json.loads((runs[1] / name).read_text()))
        assert stable(a) == stable(b), name


def test_the_notebooks_write_what_the_report_modules_build(built_reports, tmp_path):
    # The papermill build (the notebooks) and the report module (in process) agree on the same inputs.
    _build(REPORTS["03-recorded-runs"][0], {"output_dir": str(tmp_path)})
    name = REPORTS["03-recorded-runs"][1]
    assert (
        determinism.first_difference(
            json.loads((built_reports.out / name).read_text()), json.loads((tmp_path / name).read_text())
        )
        is None
    )
