"""Notebook 03's costs: every run priced from its own tokens, scripted runs under a stated reference model."""

import dataclasses

import pytest

from wismo import runs
from wismo.reports import run_costs
from wismo.runs import summaries


@pytest.fixture(scope="module")
def loaded():
    return [runs.load(f) for f in summaries.selected_runs(None) if f.name.startswith("scripted-")]  # not imported


def test_scripted_runs_are_priced_as_the_reference_model_and_say_so(loaded):
    costs = run_costs.run_costs(loaded, "gpt-4.1-mini")
    assert {c["backend"] for c in costs} == {"scripted"}
    for c in costs:
        assert c["pricedAs"] == "gpt-4.1-mini" and c["model"] == "scripted-v1"
        assert c["label"].startswith(
            "priced from scripted (no model), tiktoken-estimated tokens as gpt-4.1-mini (a reference model"
        )
        # By hand from the recorded totals: $0.40 per million input tokens, $1.60 per million output (nothing cached).
        by_hand = (c["inputTokens"] * 0.4 + c["outputTokens"] * 1.6) / 1e6
        assert c["totalUsd"] == pytest.approx(by_hand, abs=1e-9) and c["usdPer1000"] == pytest.approx(
            by_hand / c["conversations"] * 1000
        )
    result = {"costs": costs}
    assert run_costs.check_costs(result).startswith("Checked: each run is priced from its own tokens")
    costs[0]["totalUsd"] += 0.01
    with pytest.raises(AssertionError, match=f"{costs[0]['run']}: .* request by request"):
        run_costs.check_costs(result)


def test_a_live_run_is_priced_as_its_model_or_says_why_not(loaded):
    run = loaded[0]
    live = dataclasses.replace(
        run,
        manifest={
            **run.manifest,
            "backend": "openai-chat",
            "model": "gpt-4o-mini",
            "figures": {**run.manifest["figures"], "tokens": "server-reported"},
        },
    )
    unknown = dataclasses.replace(live, manifest={**live.manifest, "model": "local-llama-3"})
    priced, not_priced = run_costs.run_costs([live, unknown], "gpt-4.1-mini")
    assert (
        priced["pricedAs"] == "gpt-4o-mini"
        and priced["label"] == "priced from server-reported tokens as gpt-4o-mini (the run's model)"
    )
    assert not_priced["pricedAs"] is None and "no price for model 'local-llama-3'" in not_priced["label"]
    assert run_costs.check_costs({"costs": [not_priced]}).startswith("No run's model has a price")
    assert run_costs.costs_table({"costs": [priced, not_priced]})[1]["priced as"] == "not priced"


def test_runs_of_estimates_are_recounted_under_the_fitted_profile_and_priced(loaded):
    from wismo.runs.recount import RecountRefused, recount
    from wismo.studies.declaration import article

    instructions = article().instructions
    for run in loaded:
        recorded = [[q["usage"]["inputTokens"] for q in t["requests"]] for t in run.traces]
        assert recount(run, instructions, "python") == recorded  # its own profile gives its own tokens
        heavier = recount(run, instructions, "csharp-raw-element")
        # Request 1 holds no result, so the framing shows from request 2 on, growing with every result resent.
        assert all(h[0] == r[0] and all(a > b for a, b in zip(h[1:], r[1:])) for h, r in zip(heavier, recorded))
        with pytest.raises(RecountRefused, match=f"run {run.manifest['runId']} cannot be recounted: the instructions"):
            recount(run, instructions + " ", "python")
    fitted = run_costs.Fitted("csharp-raw-element", instructions)
    costs = run_costs.run_costs(loaded, "gpt-4.1-mini", fitted=fitted)
    for c in costs:
        f = c["fitted"]
        assert (f["profile"], f["ownProfile"], f["ownRecountMatches"]) == ("csharp-raw-element", "python", True)
        assert f["inputTokens"] > c["inputTokens"] and f["usdPer1000"] > c["usdPer1000"]
        # Priced the same way: only the input changed, the outputs as recorded.
        by_hand = (f["inputTokens"] * 0.4 + c["outputTokens"] * 1.6) / 1e6 / c["conversations"] * 1000
        assert f["usdPer1000"] == pytest.approx(by_hand, abs=1e-6)
    assert all("fitted" not in c for c in run_costs.run_costs(loaded, "gpt-4.1-mini", fitted=None))
    same = run_costs.run_costs(loaded, "gpt-4.1-mini", fitted=run_costs.Fitted("python", instructions))
    assert all("fitted" not in c for c in same)  # nothing to recount under the profile they were counted under
