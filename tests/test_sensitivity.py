"""The calibration's sensitivity to what is not published: every framing crossed with every call counting, the best
fit and the spread, and the second design's conversation as a test of each framing (real results over MCP)."""

import json

import pytest

from wismo.analyses import calibration, sensitivity
from wismo.domain.answer import SCORED
from wismo.reports import calibration as shown
from wismo.runs.scoring import load_expectations
from wismo.studies.declaration import article
from wismo.studies.recording import record
from wismo.tokens import framing

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
async def built():
    study = article()
    recorded = await record(study, ["ORD-1004"])
    pub = calibration.published_figures(study.published, calibration.calibrated(study.published))
    expected = load_expectations()["ORD-1004"]
    return sensitivity.build(recorded, pub, {k: expected[k] for k in SCORED}, "o200k_base")


def shown_result(built):
    """The result blocks the statements read."""
    return {"sensitivity": built, "calibration": {"designs": built["designs"], "case": built["case"]}}


def _cells(s):
    return {(r["framing"], r["counting"]): (r["additions"], r["errorPercent"]) for r in s["rows"]}


async def test_the_table_crosses_every_framing_with_every_counting_and_pins_its_cells(built):
    cells = _cells(built)
    assert len(cells) == len(sensitivity.FRAMINGS) * len(sensitivity.COUNTINGS) == 16
    assert cells[("bare text", "name + arguments")] == ([129, 354], [-55.1, -50.4])
    assert cells[("compact, default escaping", "name + arguments")] == ([275, 733], [-4.2, 2.7])
    assert cells[("compact, default escaping", "with call_id")] == ([280, 753], [-2.4, 5.5])
    assert cells[("compact, default escaping", "parallel-call wrapper")] == ([275, 762], [-4.2, 6.7])
    assert cells[("indented, default escaping", "name + arguments")] == ([288, 785], [0.3, 9.9])
    assert cells[("indented, relaxed escaping", "name + arguments")] == ([160, 454], [-44.3, -36.4])
    # A turn of one call has no parallel wrapper; a lone text result has no isError under bare text.
    assert cells[("bare text", "isError: false kept")] == cells[("bare text", "name + arguments")]
    assert built["rows"][0]["derived"] == [287, 714]


async def test_the_best_fit_is_the_cell_with_the_smallest_larger_error_and_the_spread_covers_every_cell(built):
    assert built["bestFit"]["framing"] == "compact, default escaping"
    assert built["bestFit"]["counting"] == "name + arguments"
    worst = min(max(abs(e) for e in r["errorPercent"]) for r in built["rows"])
    assert max(abs(e) for e in built["bestFit"]["errorPercent"]) == worst
    spread = built["spread"]
    assert (spread["cells"], spread["cellsWithinTolerance"]) == (16, 1)
    assert spread["turnErrorPercent"] == [[-55.1, 2.8], [-50.4, 14.0]]


async def test_requests_two_and_three_are_request_one_plus_the_turns(built):
    for r in built["rows"]:
        assert r["rebuiltRequests"][1:] == [718 + r["additions"][0], 718 + sum(r["additions"])]


async def test_the_focused_conversation_rules_out_the_framings_that_fit_the_granular_one(built):
    sizes = built["answerSizes"]
    assert (sizes["quotedSummary"], sizes["minimalOutputs"]) == (52, 110)
    verdicts = {r["framing"]: (r["outputRemainder"], r["verdict"]) for r in built["secondTest"]["rows"]}
    assert verdicts["compact, default escaping"] == ([65, 70], "ruled out")
    assert verdicts["indented, default escaping"] == ([50, 57], "ruled out")
    assert verdicts["bare text"][1] == verdicts["indented, relaxed escaping"][1] == "possible"
    assert built["secondTest"]["ruledOut"] == 2
    sentence = shown.conflict_statement(shown_result(built))
    assert "no single framing explains both published conversations" in sentence


async def test_statements_say_fit_and_hypothesis_not_confirmation(built):
    fit = shown.fit_statement(shown_result(built))
    assert "a fit, not a confirmation" in fit and "1 of them lands within ±5%" in fit and "Checked" not in fit
    hypothesis = shown.hypothesis_statement(shown_result(built))
    for source in ("csharp-sdk v2.2.0", "dotnet/extensions v10.8.3", "dotnet/runtime", "#962"):
        assert source in hypothesis
    assert "is not established" in hypothesis


def test_the_indented_default_framing_keeps_default_escapes_and_indents():
    out = framing.indented_default_output(framing.text_result('{"a":"é"}'))
    assert out.startswith('{\n  "content": [') and "\\u0022a\\u0022" in out and "\\u00E9" in out
    assert json.loads(out)["content"][0]["text"] == '{"a":"é"}'
