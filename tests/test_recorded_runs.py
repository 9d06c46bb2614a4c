"""Notebook 03 for every study: any number of designs, each against the reference, in the study's own words, beside
the conversations the study publishes; a run of another study refused in one sentence."""

import json
import re
import shutil

import pytest

from commands import one_sentence
from wismo import cli, runs
from wismo.accounting.cost import saving
from wismo.core import reference
from wismo.core.paths import NOTEBOOKS, REPO_ROOT
from wismo.reports import recorded_runs, run_costs, sentences
from wismo.runs import summaries
from wismo.studies import declaration
from wismo.studies.declaration import StudyInvalid

HELPDESK = REPO_ROOT / "tests" / "studies" / "helpdesk"
# A third design: granular's server, following the customer link alone (so its figures differ from both others).
LEAN = """
[designs.lean]
command = ["{python}", "helpdesk.py", "granular"]
entry = { tool = "get_ticket", arguments = { ticketId = "{ticketId}" }, into = "ticket" }
links = [{ from = "customerId", tool = "get_customer", argument = "customerId", into = "customer" }]
"""
# The article's vocabulary, which no other study's report may speak ("border" in a table's style is no word of it).
ORDER_WORDS = re.compile(r"\b[Oo]rder|\bORD-")


def _helpdesk(folder, extra_designs: str = "", tail: str = ""):
    """The helpdesk study copied into `folder` with its server, designs added before the cases and `tail` at the end."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(HELPDESK / "helpdesk.py", folder / "helpdesk.py")
    text = (HELPDESK / "helpdesk.toml").read_text(encoding="utf-8")
    assert "\n[[cases]]" in text, "the helpdesk study no longer declares [[cases]]"
    path = folder / "helpdesk.toml"
    path.write_text(text.replace("\n[[cases]]", extra_designs + "\n[[cases]]", 1) + tail, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    """The helpdesk study with a third design, and one scripted repetition of every design recorded for it."""
    folder = tmp_path_factory.mktemp("helpdesk3")
    path = _helpdesk(folder, LEAN)
    assert cli.main(["evaluate", "--study", str(path), "both", "1", "--runs-dir", str(folder / "runs")]) == 0
    return path, folder / "runs"


def test_a_three_design_study_sets_each_design_against_the_reference_in_its_own_words(three, tmp_path):
    path, runs_dir = three
    result = recorded_runs.build({"study": str(path), "runs_dir": str(runs_dir), "output_dir": str(tmp_path)})
    (group,) = result["groups"]
    assert group["study"] == {
        "title": "Helpdesk",
        "file": "helpdesk.toml",
        "key": "ticketId",
        "reference": "granular",
        "designs": ["granular", "focused", "lean"],
    }
    assert result["focus"] == "T-1001" and group["designs"] == ["granular", "focused", "lean"]
    medians = {m["measure"]: m for m in group["medians"]}
    # The scripted model follows each declaration: entry, links, answer; lean has one link turn, focused none.
    assert [medians["turns"][d] for d in group["designs"]] == [3, 2, 3]
    tokens = medians["totalTokens"]
    for design in ("focused", "lean"):
        assert tokens[f"{design} vs granular %"] == round(
            (tokens[design] - tokens["granular"]) / tokens["granular"] * 100, 1
        )
        assert tokens[f"{design} vs granular %"] < 0
        # The headline's saving is the one saving function's on the runs' input tokens, per case then the median.
        saved = next(x for x in group["saving"] if x["design"] == design)
        assert group["headline"]["saving"][design] == saved["medianPercent"] > 0
    assert "granular vs granular %" not in tokens
    # No latency model and no expected answer: those key figures are left out, not shown as n/a.
    assert "elapsedChange" not in group["headline"] and "passK" not in group["headline"]
    said = {
        "groups": sentences.groups_sentence(result["groups"]),
        "medians": sentences.medians_sentence(group),
        "scores": sentences.pass_k_sentence(group),
        "history": recorded_runs.check_resent_history(result, group),
        "prices": run_costs.check_costs(group),
        "cost": run_costs.cost_answer(group),
        "published": sentences.published_sentence(result),
        **sentences.transcript_headings(group),
    }
    for design in ("focused", "lean"):
        assert f"{design} {next(x for x in group['saving'] if x['design'] == design)['says']}" in said["medians"]
        assert f"with {design} USD " in said["cost"]
    assert "for granular, 2 for focused, 3 for lean" in said["medians"]
    assert said["history"].endswith("granular (the reference) 3; focused 2, 1 fewer; lean 3, as many.")
    assert set(group["transcripts"]) == {"granular", "focused", "lean"}
    tables = [
        recorded_runs.medians_table(group),
        group["scoresByCase"],
        group["outcomes"],
        run_costs.costs_table(group),
        *group["transcripts"].values(),
    ]
    text = "\n".join([*said.values(), *(json.dumps(rows) for rows in tables)])  # sentences, headers and cells
    assert not ORDER_WORDS.search(text), text[max(0, ORDER_WORDS.search(text).start() - 80) :][:160]
    assert [r["case"] for r in group["scoresByCase"]] == ["T-1001", "T-1002"] * 3


def _shown_text(notebook: dict) -> str:
    """What an executed notebook shows a reader: its Markdown, and its outputs' text without styles or images."""
    parts = []
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":
            parts.append("".join(cell["source"]))
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            parts += ["".join(data.get(k, "")) for k in ("text/markdown", "text/plain")]
            html = "".join(data.get("text/html", ""))
            parts.append(re.sub(r"<style.*?</style>|data:image/[^\"']+", "", html, flags=re.S))
            if out["output_type"] == "error":
                parts.append(f"{out['ename']}: {out['evalue']}")
    return "\n".join(parts)


@pytest.mark.slow
def test_notebook_03_executed_for_a_three_design_study_speaks_no_order_words(three, tmp_path):
    from wismo.reports.render import build

    path, runs_dir = three
    params = {"study": str(path), "runs_dir": str(runs_dir)}
    executed = build.execute(NOTEBOOKS / "03-recorded-runs.ipynb", tmp_path, params)
    text = _shown_text(json.loads(executed.read_text(encoding="utf-8")))
    found = ORDER_WORDS.search(text)
    assert found is None, text[max(0, found.start() - 80) :][:160]
    assert "lean" in text and "Left out here: the recorded runs beside the conversations a study publishes." in text


def test_the_articles_runs_stand_beside_its_published_ord_1004_conversations(tmp_path):
    result = recorded_runs.build({"output_dir": str(tmp_path)})
    group, traced = result["groups"]  # the scripted runs first, then the runs imported from the shipped traces
    assert (group["backend"], traced["label"]) == ("scripted", "imported traces, model scripted-v1")
    # The shipped traces mark their usage as the scripted model's estimate (wismo.usage.kind), and it stays so.
    # Traces of the stand-in are no model's runs: labelled scripted, never measured.
    assert (
        traced["kinds"]["tokens"]
        == "scripted (no model), tiktoken-estimated (imported traces; provider wismo.scripted)"
    )
    assert traced["kinds"]["runs"] == "imported traces of a stand-in model, scripted (no model)"
    assert traced["kinds"]["turns"].startswith("scripted (no model)") and not traced["liveModel"]
    rows = {r["figure"]: r for r in group["againstPublished"]}
    article = reference.load("where-is-my-order")
    pub, sections = article["ORD-1004"], article["source"]["figureSections"]
    expected = {}
    for design in ("granular", "focused"):
        for words, key in (
            ("model turns", "modelTurns"),
            ("tool calls", "toolCalls"),
            ("tokens, whole conversation", "conversationTokens"),
            ("elapsed seconds", "elapsedSeconds"),
        ):
            expected[f"{design} ORD-1004 {words}"] = (pub[design][key], sections[f"ORD-1004.{design}.{key}"])
    medians = article["medians"]
    expected["focused against granular: median tokens, input and output"] = (
        " ".join(saving.amount(medians["focusedFewerTokensPercent"])),
        sections["medians.focusedFewerTokensPercent"],
    )
    expected["focused against granular: median elapsed time"] = (
        " ".join(saving.amount(medians["focusedLowerElapsedPercent"], "less")),
        sections["medians.focusedLowerElapsedPercent"],
    )
    assert {f: (r["published (provider-reported or measured)"], r["published in"]) for f, r in rows.items()} == expected
    assert rows["granular ORD-1004 tokens, whole conversation"]["published (provider-reported or measured)"] == 3669
    assert rows["focused ORD-1004 elapsed seconds"]["published (provider-reported or measured)"] == 2.832
    assert (
        rows["granular ORD-1004 tokens, whole conversation"]["published figure is"] == "provider-reported (published)"
    )
    assert rows["focused ORD-1004 tool calls"]["published figure is"] == "measured (published)"
    first = next(r for r in group["cases"] if (r["design"], r["case"], r["repetition"]) == ("granular", "ORD-1004", 1))
    assert rows["granular ORD-1004 tokens, whole conversation"]["wismo"] == first["totalTokens"]
    change = next(m for m in group["medians"] if m["measure"] == "totalTokens")["focused vs granular %"]
    assert rows["focused against granular: median tokens, input and output"]["wismo"] == saving.change(change)
    assert (
        rows["focused against granular: median tokens, input and output"]["published (provider-reported or measured)"]
        == "42% fewer"
    )
    assert result["published"]["reference"] == article["source"]
    assert sentences.published_sentence(result).endswith(f"{article['source']['kind']}.")


def test_a_run_of_another_study_is_refused_in_one_sentence(three, tmp_path):
    path, runs_dir = three
    mixed = tmp_path / "runs"
    for folder in runs.find():  # the shipped runs, whose manifests name no study
        shutil.copytree(folder, mixed / folder.name)
    lean = next(f for f in runs_dir.iterdir() if "-lean-" in f.name)
    shutil.copytree(lean, mixed / lean.name)
    with pytest.raises(recorded_runs.NotTheStudysRun) as refused:
        recorded_runs.build({"runs_dir": str(mixed), "output_dir": str(tmp_path / "out")})
    said = str(refused.value)
    assert one_sentence(said) and "helpdesk.toml" in said and "where-is-my-order.toml" in said, said
    assert (refused.value.run, refused.value.named) == (lean.name, "helpdesk.toml")
    assert refused.value.study == "where-is-my-order.toml"
    # The other way round: the newest shipped runs name the article's study; the older ones name none, and are the
    # article's because they were recorded with wismo's own instructions.
    with pytest.raises(recorded_runs.NotTheStudysRun, match="recorded for where-is-my-order.toml") as refused:
        recorded_runs.build({"study": str(path), "runs_dir": str(runs.RUNS), "output_dir": str(tmp_path / "out")})
    assert one_sentence(str(refused.value))
    unnamed = tmp_path / "unnamed"
    for folder in runs.find():
        if "study" not in json.loads((folder / "manifest.json").read_text(encoding="utf-8")):
            shutil.copytree(folder, unnamed / folder.name)
    with pytest.raises(recorded_runs.NotTheStudysRun, match="names no study and its instructions") as refused:
        recorded_runs.build({"study": str(path), "runs_dir": str(unnamed), "output_dir": str(tmp_path / "out")})
    assert one_sentence(str(refused.value))


def test_a_new_run_of_the_article_is_scored_as_the_shipped_ones_are(tmp_path):
    # Its manifest names the study, whose cases declare no expect: wismo's answer contract gives the expectations.
    assert cli.main(["evaluate", "both", "1", "--orders", "ORD-1004", "--runs-dir", str(tmp_path)]) == 0
    loaded = [runs.load(f) for f in runs.find(tmp_path)]
    assert [r.manifest["study"]["expectations"] for r in loaded] == [{}, {}]
    assert [r["passed"] for r in summaries.case_rows(loaded)] == [True, True]


def test_published_tool_calls_elapsed_time_and_the_elapsed_median_are_read_and_checked(tmp_path):
    published = declaration.article().published
    assert [(c.tool_calls, c.elapsed_s) for c in published.conversations] == [(5, 5.288), (1, 2.832)]
    assert published.median_elapsed_saving_percent == 33 and published.compared() == ("granular", "focused")
    tail = """
[published]
source = "a staging log"
model = "some-model"
median_elapsed_saving_percent = 10

[[published.conversations]]
design = "granular"
case = "T-1001"
calls = 3
tool_calls = 1.5

[[published.conversations]]
design = "granular"
case = "T-1002"
elapsed_s = "slow"

[[published.conversations]]
design = "granular"
case = "T-1002"
calls = 3
tool_calls = 2
elapsed_s = 1.25
"""
    with pytest.raises(StudyInvalid) as invalid:
        declaration.load(_helpdesk(tmp_path, tail=tail))
    problems = invalid.value.problems
    assert any("tool_calls must be a count (a whole number), not 1.5" in p for p in problems), problems
    assert any("elapsed_s must be a number of seconds, not 'slow'" in p for p in problems), problems
    assert any("median_elapsed_saving_percent sets one design against another" in p for p in problems), problems
    assert all(one_sentence(p) for p in problems), problems


def test_a_published_call_id_is_read_from_the_reference_and_checked(tmp_path):
    published = declaration.article().published
    assert [c.call_id for c in published.conversations] == ["call_cqXeuxQPiA9BEepDEw5oVh2I", None]
    tail = """
[published]
source = "a staging log"
model = "some-model"

[[published.conversations]]
design = "granular"
case = "T-1001"
calls = 3
call_id = "call one"

[[published.conversations]]
design = "granular"
case = "T-1002"
call_id = 7
"""
    with pytest.raises(StudyInvalid) as invalid:
        declaration.load(_helpdesk(tmp_path, tail=tail))
    problems = invalid.value.problems
    assert sum("call_id must be one call id as the provider returned it" in p for p in problems) == 2, problems
    assert all(one_sentence(p) for p in problems), problems


def test_the_focus_must_be_a_case_of_the_study_and_defaults_to_its_own():
    from wismo.reports.params import ParameterError

    with pytest.raises(ParameterError, match="it must be a case of the study: ORD-1001, ORD-1002") as refused:
        recorded_runs.checked({"focus_order": "T-1001"})
    assert one_sentence(str(refused.value))
    assert recorded_runs.checked({})["focus_order"] is None  # build takes the study's focus, ORD-1004 here
