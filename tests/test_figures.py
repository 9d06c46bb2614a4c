"""Key figures: pointers into a notebook's JSON result, resolved and formatted for the index."""

import dataclasses
import json
import string

import pytest

from wismo.core.paths import NOTEBOOKS
from wismo.reports.render import figures
from wismo.studies.declaration import article

ARTICLE = article()  # the study whose needs the figures are read for
RESULT = {
    "summary": {"casesEqual": 6, "cases": 6, "bytes": {"granular": 4974, "focused": 5293}},
    "caseStudy": {"ratio": 5.714285714285714},
    "medians": [
        {"measure": "turns", "granular": 3.0, "focused": 2.0, "focused vs granular %": -33.3},
        {"measure": "elapsed", "granular": None, "focused": None, "focused vs granular %": None},
    ],
    "passK": [{"orderId": "A", "pass^k": True}, {"orderId": "B", "pass^k": False}, {"orderId": "C", "pass^k": True}],
    "ratios": [{"saving": 50.0}, {"saving": 53.1}, {"saving": 51.1}, {"saving": 48.0}],
    "tokensAre": "tiktoken-estimated",
}


@pytest.mark.parametrize(
    "path, value",
    [
        ("summary.casesEqual", 6),
        ("summary.bytes.focused", 5293),
        ("medians[measure=turns].focused", 2.0),
        ("medians[measure=turns].focused vs granular %", -33.3),
        ("medians[-1].measure", "elapsed"),
        ("passK[*].orderId", ["A", "B", "C"]),
        ("passK[pass^k=false].orderId", "B"),
        ("count(passK[*].pass^k)", 2),
        ("len(passK)", 3),
        ("median(ratios[*].saving)", 50.55),
        ("max(ratios[*].saving)", 53.1),
    ],
)
def test_resolve(path, value):
    assert figures.resolve(RESULT, path) == value


@pytest.mark.parametrize(
    "path, message",
    [
        ("summary.nothing", "no key 'nothing'"),
        ("medians[measure=speed]", "no item with measure = speed"),
        ("medians[9]", "index 9 out of range"),
        ("summary[0]", "needs a list"),
        ("mean(ratios[*].saving)", "unknown function mean()"),
        ("len(summary)", "len() needs a list"),
        ("summary..orders", "cannot parse path"),
    ],
)
def test_resolve_names_what_is_missing(path, message):
    with pytest.raises(KeyError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        figures.resolve(RESULT, path)


def test_render_formats_each_field():
    assert figures.render("{summary.casesEqual}/{summary.cases}", RESULT) == "6/6"
    assert figures.render("ratio {caseStudy.ratio:.1f}", RESULT) == "ratio 5.7"
    assert figures.render("{summary.bytes.granular} vs {summary.bytes.focused}", RESULT) == "4,974 vs 5,293"
    assert figures.render("{medians[measure=turns].granular} vs {medians[measure=turns].focused}", RESULT) == "3 vs 2"
    assert figures.render("{medians[measure=turns].focused vs granular %:+.1f}%", RESULT) == "-33.3%"
    assert figures.render("{medians[measure=elapsed].focused:.1f}", RESULT) == "n/a"
    assert figures.render("{count(passK[*].pass^k)}/{len(passK)}", RESULT) == "2/3"
    assert figures.render("no fields", RESULT) == "no fields"


def test_default_formats():
    assert [figures.format_value(v) for v in (1234567, 2.0, 5.7142, True, None, "x")] == [
        "1,234,567",
        "2",
        "5.71",
        "yes",
        "n/a",
        "x",
    ]


def _notebook(*declared):
    return {"metadata": {"wismo": {"summary": "s", "figures": list(declared)}}}


def test_key_figures_read_the_written_json(tmp_path):
    (tmp_path / "result.json").write_text(json.dumps(RESULT))
    nb = _notebook(
        {
            "label": "cases equal",
            "file": "result.json",
            "value": "{summary.casesEqual}/{summary.cases}",
            "kind": "measured",
        },
        {"label": "tokens", "file": "result.json", "value": "{len(passK)}", "kind": "{tokensAre}"},
    )
    found = figures.key_figures(nb, tmp_path, "x.ipynb", ARTICLE)
    assert found == [
        figures.Figure("6/6", "cases equal", "measured", "result.json"),
        figures.Figure("3", "tokens", "tiktoken-estimated", "result.json"),
    ]
    assert figures.key_figures({"metadata": {}}, tmp_path, "x.ipynb", ARTICLE) == []


def test_key_figures_by_need_and_optional_and_per_design(tmp_path):
    (tmp_path / "result.json").write_text(json.dumps({**RESULT, "study": {"designs": ["granular", "focused"]}}))
    nb = _notebook(
        {"label": "needs", "file": "result.json", "value": "{a}", "needs": "published"},
        {"label": "absent", "file": "result.json", "value": "{nothing.here}", "optional": True},
        {"label": "per design", "file": "result.json", "value": "{summary.bytes}"},
    )
    study = article()
    plain = dataclasses.replace(study, published=None)
    with pytest.raises(figures.FigureError, match="no key 'a'"):  # the article publishes: the figure is read
        figures.key_figures(nb, tmp_path, "x.ipynb", study)
    (found,) = figures.key_figures(nb, tmp_path, "x.ipynb", plain)  # needs unmet, optional absent: both left out
    assert found.value == "granular 4,974, focused 5,293"  # the study's order, reference first, not the JSON's
    assert figures.format_value([275, 733]) == "275 / 733"
    # A comparison's JSON keeps its designs' order in the summary's list, whatever its sorted keys do to a table.
    compared = {"summary": {"designs": ["granular", "focused"], "calls": {"focused": 6, "granular": 24}}}
    assert figures.render("{summary.calls}", compared) == "granular 24, focused 6"


def test_key_figures_fail_naming_the_notebook_and_the_figure(tmp_path):
    (tmp_path / "result.json").write_text(json.dumps(RESULT))
    with pytest.raises(figures.FigureError, match=r"x.ipynb: key figure 'gone': other.json was not written"):
        figures.key_figures(
            _notebook({"label": "gone", "file": "other.json", "value": "{a}"}), tmp_path, "x.ipynb", ARTICLE
        )
    with pytest.raises(
        figures.FigureError, match=r"x.ipynb: key figure 'typo' \(result.json: \{summary.order\}\): no key 'order'"
    ):
        figures.key_figures(
            _notebook({"label": "typo", "file": "result.json", "value": "{summary.order}"}),
            tmp_path,
            "x.ipynb",
            ARTICLE,
        )
    with pytest.raises(figures.FigureError, match="Unknown format code"):
        figures.key_figures(
            _notebook({"label": "spec", "file": "result.json", "value": "{tokensAre:d}"}), tmp_path, "x.ipynb", ARTICLE
        )


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.name)
def test_declared_figures_are_well_formed(path):
    nb = json.loads(path.read_text())
    for spec in figures.declared(nb):
        assert {"label", "file", "value", "kind"} <= set(spec), spec
        assert spec["file"].endswith(".json") and "/" not in spec["file"]
        fields = [f for _, f, _, _ in string.Formatter().parse(spec["value"]) if f]
        assert fields, f"{spec['label']}: the value names no field, so it would be typed, not read"
        for field in fields:
            figures._segments(field[field.find("(") + 1 : -1] if field.endswith(")") else field)
