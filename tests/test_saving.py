"""The one saving: a design against the reference per case, its median, its range across client profiles, and the
words every page says it in; the verdict's sentences built from it."""

import pytest

from wismo.accounting.cost import saving
from wismo.reports import verdict

TOTALS = {
    "python": {
        ("granular", "A"): 2000,
        ("focused", "A"): 1000,
        ("granular", "B"): 3000,
        ("focused", "B"): 1200,
        ("scoped", "A"): 4000,
        ("scoped", "B"): 6000,
    },
    "csharp-raw-element": {
        ("granular", "A"): 2600,
        ("focused", "A"): 1500,
        ("granular", "B"): 3600,
        ("focused", "B"): 2000,
        ("scoped", "A"): 5000,
        ("scoped", "B"): 7000,
    },
}


def test_each_design_per_case_median_and_range():
    found = {s.design: s for s in saving.savings(TOTALS, "granular", "python", {"focused": 42})}
    focused, scoped = found["focused"], found["scoped"]
    assert focused.per_case == {"A": 50.0, "B": 60.0} and focused.median == 55.0
    # csharp: 1 - 1500/2600 = 42.3, 1 - 2000/3600 = 44.4; median 43.35
    assert focused.by_profile == {"python": 55.0, "csharp-raw-element": 43.35}
    assert (focused.low, focused.high) == (43.35, 55.0) and focused.published == 42
    assert scoped.per_case == {"A": -100.0, "B": -100.0} and scoped.published is None
    assert list(found) == ["focused", "scoped"]  # the reference is never set against itself


def test_the_headline_profile_must_have_been_counted():
    with pytest.raises(KeyError, match="'bare' was not counted"):
        saving.savings(TOTALS, "granular", "bare")


@pytest.mark.parametrize(
    ("percent", "said"),
    [
        (51.05, "uses 51% fewer input tokens"),
        (0.4, "uses 0.4% fewer input tokens"),
        (0.0, "uses as many input tokens"),
        (-30.0, "uses 30% more input tokens"),
        (-135.0, "uses 2.4x more input tokens"),
        (-2235.4, "uses 23.4x more input tokens"),
    ],
)
def test_one_sign_convention(percent, said):
    assert saving.says(percent) == said
    assert "-" not in said


def test_a_range_reads_in_the_same_words():
    assert saving.span(45.6, 51.05) == "46% to 51% fewer input tokens"
    assert saving.span(-30.0, -10.0) == "10% to 30% more input tokens"
    assert saving.span(-10.0, 5.0) == "10% more to 5% fewer input tokens"
    assert saving.span(-300.0, -150.0) == "2.5x to 4.0x more input tokens"


def _verdict(designs=("focused",), fitted="csharp-raw-element"):
    found = [s for s in saving.savings(TOTALS, "granular", "python", {"focused": 42}) if s.design in designs]
    return {
        "reference": "granular",
        "profile": "python",
        "profiles": ["python", fitted],
        "fittedProfile": fitted,
        "range": f"from bare text to the best-fitting framing, {fitted}",
        "cases": 2,
        "savings": [s.as_dict() for s in found],
    }


def test_the_verdict_names_the_winner_its_saving_range_and_the_published_figure():
    said = verdict.saving_sentence(_verdict())
    assert said == (
        "**focused** wins: it uses 55% fewer input tokens than **granular**, 43% to 55% fewer across client profiles."
    )
    basis = verdict.basis_sentence(_verdict())
    assert basis.startswith("Medians of 2 cases (python client profile; ranges from bare text to the best-fitting")
    assert basis.endswith("; the study published a median of 42% fewer tokens (input and output) for focused.")


def test_every_design_of_a_study_in_the_same_sentence_shape():
    said = verdict.saving_sentence(_verdict(("focused", "scoped")))
    assert "**focused** wins: it uses 55% fewer" in said
    assert "; **scoped** uses 2.0x more input tokens than **granular**, 93% to 2.0x more across client" in said
    only_worse = verdict.saving_sentence(_verdict(("scoped",)))
    assert only_worse.startswith("**granular**, the reference, wins: **scoped** uses 2.0x more")


def test_the_verdict_says_when_no_live_model_ran():
    scripted = {"groups": [{"liveModel": False, "model": "scripted-v1", "backend": "scripted"}]}
    said = verdict.model_sentence(scripted, "where-is-my-order.toml", True)
    assert said.startswith("No live model ran in this build") and "`wismo evaluate both 3 MODEL openai`" in said
    assert "--study mine.toml" in verdict.model_sentence(None, "mine.toml", False)
    live = {
        "groups": [
            {
                "liveModel": True,
                "model": "gpt-4.1-mini",
                "backend": "openai",
                "saving": [{"design": "focused", "medianPercent": 48.2}],
            }
        ]
    }
    assert verdict.model_sentence(live, "x.toml", True) == (
        "Live model runs in this build: gpt-4.1-mini (openai): focused uses 48% fewer input tokens."
    )


def test_a_count_against_the_reference_is_never_signed():
    from wismo.reports.equivalence import more_or_fewer

    assert more_or_fewer(319, "bytes") == "319 more bytes" and more_or_fewer(-18, "calls") == "18 fewer calls"
    assert more_or_fewer(0, "calls") == "as many calls" and more_or_fewer(-1200, "bytes") == "1,200 fewer bytes"
