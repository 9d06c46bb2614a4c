"""The sentences the notebooks show around their figures: every number read from the result it is given."""

from wismo.reports import case_study as case_study_report
from wismo.reports import sentences


def test_the_case_study_paragraph_and_table_come_from_its_sessions():
    cs = case_study_report.case_study(6000, (18000, 1500), 7, 128000, 75000)
    text = sentences.case_study_sentence(cs)
    assert "**420,000**" in text and "**73,500**" in text and "ratio of **5.7**" in text
    assert "one more tool call would carry 132,000" in text and "fail at call 8" in text
    assert "Scoped tools meet the 75,000-token goal; broad tools miss it." in text
    rows = sentences.case_study_table(cs)
    assert len(rows) == 7 and rows[-1]["broad: input (tokens, modelled)"] == 114000
    assert rows[-1]["broad: cumulative (tokens, modelled)"] == 420000


def test_saving_and_framing_sentences():
    ratios = [{"focusedSavingPercent": v} for v in (40.0, 51.0, 60.0)]
    assert "**51.0%**" in sentences.saving_sentence(ratios)
    shares = [{"design": "granular", "share from framing %": 19.5}, {"design": "focused", "share from framing %": 25.6}]
    assert sentences.framing_sentence(shares) == (
        "Framing alone accounts for **19.5%** of the granular conversation's input "
        "and **25.6%** of the focused conversation's input (modelled from tiktoken estimates)."
    )


def _group(modelled):
    medians = [
        {"measure": "turns", "granular": 3, "focused": 2, "focused vs granular %": -33.3},
        {"measure": "totalTokens", "granular": 2260, "focused": 1126, "focused vs granular %": -50.2},
        {
            "measure": "modelledElapsedMs",
            "granular": 2915 if modelled else None,
            "focused": 1972 if modelled else None,
            "focused vs granular %": -32.4 if modelled else None,
        },
        {"measure": "wallMs", "granular": 4.8, "focused": 2.1, "focused vs granular %": -57.1},
    ]
    return {
        "label": "scripted backend, model scripted-v1",
        "medians": medians,
        "kinds": {
            "turns": "scripted (no model): fixed by the script's rules",
            "tokens": "scripted (no model), tiktoken-estimated",
            "elapsed": "modelled (a stated latency model)",
            "scores": "scripted (no model): scored against the expectations",
        },
        "passK": [
            {"design": "granular", "pass^k": True},
            {"design": "granular", "pass^k": False},
            {"design": "focused", "pass^k": True},
        ],
        "cases": [{"summaryFlags": ["a date in no record"]}, {"summaryFlags": []}],
    }


def test_medians_and_pass_k_sentences_say_what_each_figure_is():
    text = sentences.medians_sentence(_group(True))
    assert "median of 2 model turns against 3 (scripted (no model): fixed by the script's rules)" in text
    assert "-50.2% tokens (scripted (no model), tiktoken-estimated)" in text and "-32.4% elapsed time (modelled" in text
    assert sentences.medians_sentence(_group(False)).endswith("-57.1% elapsed time (measured).")
    assert sentences.pass_k_sentence(_group(True)) == (
        "**scripted backend, model scripted-v1**: pass^k, every repetition passed (scripted (no model): scored against "
        "the expectations): granular 1/2 order cases; focused 1/1 order cases; summary claims flagged: 1."
    )
