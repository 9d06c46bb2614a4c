"""Two runs of every report on the same inputs write byte-identical JSON, apart from timing fields."""

import json

from wismo import determinism, report
from wismo.jsonfmt import stable
from wismo.paths import NOTEBOOKS



def test_first_difference_names_the_field():
    a = {"cases": [{"bytes": 1, "timings": {"ms": 3.2}}], "timings": {"x": 1}}
    b = {"cases": [{"bytes": 2, "timings": {"ms": 9.9}}], "timings": {"x": 2}}
    assert determinism.first_difference(a, b) == "cases[0].bytes"
    assert determinism.first_difference(a, {**a, "timings": {"x": 5}}) is None
    assert determinism.first_difference([1], [1, 2]) == "<root> (length 1 vs 2)"


def test_two_runs_of_every_report_agree(built_reports, tmp_path):
    # The session's shared build is the first run; this is the second, on the same inputs.
    runs = [built_reports.out, tmp_path]
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        report.execute(path, tmp_path)
    differences = determinism.compare_folders(*runs)
    assert len(differences) == len(list(NOTEBOOKS.glob("*.ipynb"))), differences
    assert all(d is None for d in differences.values()), differences
    for name in differences:
        a = determinism.without_timings(json.loads((runs[0] / name).read_text()))
        b = determinism.without_timings(json.loads((runs[1] / name).read_text()))
        assert stable(a) == stable(b), name
