"""The sentences the notebooks show around their figures: every number read from the result it is given."""

import re

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


def test_framing_sentence():
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
        "saving": [{"design": "focused", "says": "uses 51% fewer input tokens"}],
        "study": {"reference": "granular", "designs": ["granular", "focused"]},
        "designs": ["granular", "focused"],
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
    assert "model turns 3 for granular, 2 for focused (scripted (no model): fixed by the script's rules)" in text
    # Input tokens: the one saving of these runs, as every report says it; time as less, never a signed percent.
    assert "against the granular design, focused uses 51% fewer input tokens (median per case, scripted" in text
    assert "elapsed time 32% less for focused (modelled" in text and not re.search(r"-\d", text)
    assert sentences.medians_sentence(_group(False)).endswith("elapsed time 57% less for focused (measured).")
    assert sentences.pass_k_sentence(_group(True)) == (
        "**scripted backend, model scripted-v1**: pass^k, every repetition passed (scripted (no model): scored against "
        "the expectations): granular 1/2 cases; focused 1/1 cases; summary claims flagged: 1."
    )


def test_the_case_study_checks_read_in_words_without_a_legend():
    from wismo.core import reference
    from wismo.reports.case_study import case_study_from_reference, reproduce

    ref = reference.load("context-budget-case-study")
    cs = case_study_from_reference(ref)
    rows = sentences.case_study_checks_table(reproduce(cs, ref), cs)
    assert len(rows) == 9
    for row in rows:
        for text in [*row, *(v for v in row.values() if isinstance(v, str))]:
            assert not re.search(r"[a-z][A-Z]", text), text  # no JSON key such as broadTotal
        assert row["computed against published"] == "equal"
        assert row["where the case study gives it"] in (
            "printed in its text",
            "implied by its printed figures, not printed",
        )
    assert rows[0]["figure"] == "broad session: input of all calls (tokens)"
    assert rows[-1]["figure"] == "earlier turns resent over 7 calls, 0 + 1 + … + 6 (count)"


def test_kinds_are_defined_once_and_rendered_from_that_definition():
    from wismo.core.kinds import MEANINGS, PROVIDER, TIKTOKEN

    text = sentences.kinds_sentence([TIKTOKEN, PROVIDER], {PROVIDER: "here, as the article published them"})
    assert f"**{PROVIDER}**, {MEANINGS[PROVIDER]} (here, as the article published them)" in text
    assert f"**{TIKTOKEN}**, {MEANINGS[TIKTOKEN]};" in text


def test_counts_agree_with_their_nouns():
    group = {"label": "scripted backend, model scripted-v1", "kinds": {"runs": "scripted (no model)", "tokens": "x"}}
    assert sentences.groups_sentence([group]).startswith("1 group of runs, every run verified")
    assert sentences.groups_sentence([group, group]).startswith("2 groups of runs")
    assert "(s)" not in sentences.groups_sentence([group])


def test_a_scripted_run_without_a_latency_model_has_no_elapsed_time_of_a_model():
    group = _group(False)
    group["kinds"]["runs"] = "scripted (no model)"
    text = sentences.medians_sentence(group)
    assert "wall time of the harness's own loop 57% less for focused (measured;" in text
    assert "elapsed time (measured)" not in text
