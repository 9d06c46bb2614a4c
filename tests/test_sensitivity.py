"""The calibration's sensitivity to what is not published: every framing crossed with every call counting, the best
fit and the spread, and the second design's conversation as a test of each framing (real results over MCP)."""

import json

import pytest

from wismo.accounting.tokens import framing
from wismo.domain.answer import SCORED
from wismo.reports import calibration as shown
from wismo.reports.analyses import calibration, sensitivity
from wismo.runs.scoring import load_expectations
from wismo.studies.declaration import article
from wismo.studies.investigations import record

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
    # Call ids counted at the published id's size (call_cqXeuxQPiA9BEepDEw5oVh2I, 19 tokens each), not 5.
    assert cells[("compact, default escaping", "with call_id")] == ([294, 809], [2.4, 13.3])
    assert cells[("compact, default escaping", "isError: false kept")] == ([280, 753], [-2.4, 5.5])
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
    assert built["bestFit"]["profile"] == "csharp-raw-element"  # the client profile that frames results that way
    spread = built["spread"]
    assert (spread["cells"], spread["cellsWithinTolerance"]) == (16, 1)
    assert spread["turnErrorPercent"] == [[-55.1, 7.0], [-50.4, 20.6]]


async def test_requests_two_and_three_are_request_one_plus_the_turns(built):
    for r in built["rows"]:
        assert r["rebuiltRequests"][1:] == [718 + r["additions"][0], 718 + sum(r["additions"])]


async def test_call_ids_are_counted_at_the_published_ids_size(built):
    ids = built["callIds"]
    assert ids["id"] == "call_cqXeuxQPiA9BEepDEw5oVh2I" and ids["source"].startswith("the published id")
    assert (ids["characters"], ids["tokensEach"]) == (29, [19, 19])
    sentence = shown.countings_statement(shown_result(built))
    assert sentence.count("\n- *") == 4 and "29 characters, 19 tokens each" in sentence
    for c in sensitivity.COUNTINGS:
        assert f"*{c}*: " in sentence


async def test_without_a_published_id_the_derived_ids_have_a_real_models_length(built):
    turns = [[{"name": "get_order", "arguments": {"orderId": "ORD-1004"}, "output": "{}"}]]
    ids = sensitivity.call_ids(None, turns, "o200k_base")
    assert ids["characters"] == 29 and ids["id"].startswith("call_") and ids["tokensEach"][0] > 10
    assert sensitivity.call_ids(None, turns, "o200k_base") == ids  # derived, so the same every run


async def test_the_default_escapes_found_in_the_results_are_named(built):
    found = {f["character"]: f for f in built["defaultEscapes"]["found"]}
    assert set(found) == {'"', "+"}
    assert found["+"]["escaped"] == "\\u002B" and "+00:00" in found["+"]["firstSeenIn"]
    assert found['"']["escaped"] == "\\u0022"
    sentence = shown.escapes_statement(shown_result(built))
    assert "`+` as `\\u002B`" in sentence and '`"` as `\\u0022`' in sentence


async def test_the_focused_test_has_both_bounds_and_each_verdict_names_its_margin(built):
    sizes = built["answerSizes"]
    assert (sizes["quotedSummary"], sizes["minimalOutputs"]) == (52, 110)
    bounds = built["secondTest"]["bounds"]
    # The granular output (227, derived from published) less its five calls as written, plus the focused call.
    assert (bounds["firstOutput"], bounds["firstCallsWritten"], bounds["secondCallsWritten"]) == (227, 63, 13)
    assert (bounds["lower"], bounds["upper"]) == (110, 227 - 63 + 13)
    rows = {r["framing"]: r for r in built["secondTest"]["rows"]}
    compact = rows["compact, default escaping"]
    assert compact["outputRemainder"] == [51, 70] and compact["verdict"] == "fails the lower bound"
    assert (compact["marginTokens"], compact["marginPercent"], compact["withinTolerance"]) == (40, 4.3, True)
    assert rows["indented, default escaping"]["verdict"] == "fails the lower bound"
    assert rows["bare text"]["verdict"] == rows["indented, relaxed escaping"]["verdict"] == "fails the upper bound"
    assert rows["bare text"]["outputRemainder"][0] - bounds["upper"] == rows["bare text"]["marginTokens"]
    assert (built["secondTest"]["fitting"], built["secondTest"]["judged"]) == (0, 4)
    sentence = shown.conflict_statement(shown_result(built))
    assert "No framing fits both bounds" in sentence and "inside the tolerance" in sentence
    assert "*compact, default escaping* fails the lower bound by 40 tokens (4.3% of its rebuilt turns" in sentence
    table = shown.second_test_table(shown_result(built))
    assert all(r["verdict"] in ("fails the lower bound", "fails the upper bound", "fits both bounds") for r in table)
    assert "upper bound, 177 tokens" in shown.bounds_statement(shown_result(built)).lower()


def test_a_verdict_fits_both_bounds_with_the_room_to_the_nearer_one():
    judged = sensitivity.verdict([(120, 1000), (150, 980)], lower=110, upper=200)
    assert judged == {"verdict": "fits both bounds", "marginTokens": 40, "marginPercent": 4.1, "withinTolerance": True}
    assert sensitivity.verdict([(90, 1000)], lower=None, upper=80)["verdict"] == "fails the upper bound"
    assert sensitivity.verdict([(90, 1000)], lower=None, upper=None) is None


async def test_statements_say_fit_and_hypothesis_not_confirmation(built):
    fit = shown.fit_statement(shown_result(built))
    assert "a fit, not a confirmation" in fit and "1 of them lands within ±5%" in fit and "Checked" not in fit
    hypothesis = shown.hypothesis_statement(shown_result(built))
    for source in ("csharp-sdk v2.2.0", "Microsoft.Extensions.AI 10.8.3", "dotnet/runtime", "#962", "3d617896f1"):
        assert source in hypothesis
    assert "is not established" in hypothesis
    # Sources as released: no claim for tags that are not packages, and the Responses client's first release named.
    assert "9.2.x (" not in hypothesis and "released code paths" not in hypothesis
    assert "first released in 9.4.0-preview.1.25207.5" in hypothesis and "there is no 9.2.x package" in hypothesis


def test_the_indented_default_framing_keeps_default_escapes_and_indents():
    out = framing.indented_default_output(framing.text_result('{"a":"é"}'))
    assert out.startswith('{\n  "content": [') and "\\u0022a\\u0022" in out and "\\u00E9" in out
    assert json.loads(out)["content"][0]["text"] == '{"a":"é"}'
