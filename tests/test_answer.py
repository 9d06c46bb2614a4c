"""One answer, computed once: the index opens with the verdict and its picture, every saving figure on every built page
is the one saving function's result in one sign convention, reader pages keep to their word budgets, and report 03 is
titled and labelled as scripted when no model ran."""

import json
import re

from bs4 import BeautifulSoup

from wismo.accounting.cost import saving_percent
from wismo.accounting.cost.saving import amount
from wismo.reports import verdict

# Words a reader's page may hold, at most (the index: what opens it and every card).
BUDGETS = {"01-equivalence": 1800, "02-context-cost": 2500, "03-recorded-runs": 2000}
ALL_READERS = 8000
INDEX = 700
OPENING = 120
# A saving or a change against the reference as every page says it: "51% fewer", "32% less", "1.3x more".
FIGURE = re.compile(r"(?<![\d.])(\d+(?:\.\d)?%) (fewer|less|more)\b|(?<![\d.])(\d+\.\d+x) more\b")
# What the one convention forbids: a negative saving, a saving as a bare signed percent.
FORBIDDEN = re.compile(r"sav\w* (of )?-\d|saves -|-\d+(\.\d+)?% (fewer|less|saving)|vs \w+ %")


def words(html: str) -> list[str]:
    """What a reader reads on a page: its text without scripts and styles, as words."""
    soup = BeautifulSoup(html, "html.parser")
    for el in soup.find_all(["script", "style"]):
        el.decompose()
    return soup.get_text(" ").split()


def text(html: str) -> str:
    return " ".join(words(html))


def opening_of(html: str) -> str:
    """The index's first OPENING words, as a sentence reads (no space before its punctuation)."""
    return re.sub(r"\s+([,;.)])", r"\1", " ".join(words(html)[:OPENING]))


def test_the_index_opens_with_the_verdict_and_its_picture(built_reports):
    index = (built_reports.out / "index.html").read_text()
    cost = json.loads((built_reports.out / "context-cost.json").read_text())
    found = cost["verdict"]["savings"]
    opening = opening_of(index)
    focused = next(s for s in found if s["design"] == "focused")
    assert f"focused wins: it {focused['says']} than granular" in opening, opening
    assert "No live model ran in this build" in opening and "wismo evaluate both 3 MODEL openai" in opening
    soup = BeautifulSoup(index, "html.parser")
    answer = soup.find("section", class_="answer")
    said = answer.get_text(" ").strip()
    assert len(answer.find_all("p")) <= 3 and len(re.findall(r"[.!?](\s|$)", said)) <= 3, said
    img = answer.find("img")
    assert img["src"].startswith("data:image/png;base64,") and "ORD-1004" in img["alt"]
    assert "what each model request carries" in img["alt"]
    assert len(words(index)) < INDEX, f"the index has {len(words(index))} words"
    for card in soup.find_all("article", class_="report"):
        assert 1 <= len(card.select("ul.figures li")) <= 3, card.h2.get_text()


def test_the_verdicts_figure_is_the_one_saving_functions(built_reports):
    cost = json.loads((built_reports.out / "context-cost.json").read_text())
    v = cost["verdict"]
    assert v["profiles"] == ["python", "csharp-raw-element"] and v["fittedProfile"] == "csharp-raw-element"
    (focused,) = v["savings"]
    # The same totals as the ratios table, through the one function: per case, then the median.
    assert focused["perCase"] == {r["orderId"]: r["savingPercent"] for r in cost["ratios"]}
    assert focused["publishedPercent"] == 42 and focused["lowPercent"] < focused["highPercent"]
    runs = json.loads((built_reports.out / "recorded-runs.json").read_text())
    scripted = runs["groups"][0]
    # The scripted runs' conversations are the modelled ones: the one function gives the same saving on them.
    assert scripted["saving"][0]["medianPercent"] == focused["medianPercent"]
    traces = json.loads((built_reports.out / "traces.json").read_text())
    observed = {json.loads(case)["orderId"]: v for case, v in traces["observed"][0]["perCase"].items()}
    assert len(observed) == 5 and observed == {c: v for c, v in focused["perCase"].items() if c in observed}


# Where a report's JSON keeps a saving: its own keys, the keys of a saving per case or per profile, and the blocks
# that hold a published saving as their value.
SAVINGS = {
    "medianPercent",
    "lowPercent",
    "highPercent",
    "publishedPercent",
    "savingPercent",
    "parallel %",
    "sequential %",
}
PER = {"perCase", "byProfile", "caseSaving", "medianSaving"}
PUBLISHED_SAVINGS = {"publishedCaseSaving", "publishedMedian"}


def _savings_in(node, out):
    """Every saving and change figure in a report's JSON."""
    if isinstance(node, dict):
        for k, v in node.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                if k in SAVINGS:
                    out.add(v)
                elif k.endswith(" %") and " vs " in k:
                    out.add(-v)  # a change against the reference: its negation is the saving
            elif k in PER and isinstance(v, dict):
                out.update(x for x in v.values() if isinstance(x, (int, float)))
            elif k in PUBLISHED_SAVINGS and isinstance(v, dict):
                out.add(v["value"])
            _savings_in(v, out)
    elif isinstance(node, list):
        for v in node:
            _savings_in(v, out)
    return out


def saving_figures(out):
    """Every saving figure on the built pages in `out` (the index, both versions of every report), each checked to
    be the one saving function's, in one sign convention; returns how many were found."""
    values = set()
    for name in ("context-cost.json", "recorded-runs.json", "traces.json"):
        if (out / name).exists():
            _savings_in(json.loads((out / name).read_text()), values)
    # Report 01 sets each design's bytes against the reference's in the same words.
    summary = json.loads((out / "deterministic-comparison.json").read_text())["summary"]
    values |= {saving_percent(summary["bytes"][summary["reference"]], b) for b in summary["bytes"].values()}
    allowed = {amount(v)[0] for v in values}
    seen = 0
    for path in [out / "index.html", *sorted((out / "html").glob("*.html"))]:
        said = text(path.read_text())
        assert not FORBIDDEN.search(said), f"{path.name}: {FORBIDDEN.search(said).group(0)!r}"
        for m in FIGURE.finditer(said):
            seen += 1
            assert (m.group(1) or m.group(3)) in allowed, (
                f"{path.name}: {said[max(0, m.start() - 80) : m.end() + 20]!r}"
            )
    return seen


def reader_words(out):
    """Each reader's page in `out` by report name, and its words."""
    return {
        p.name.removesuffix("-reader.html"): len(words(p.read_text())) for p in (out / "html").glob("*-reader.html")
    }


def within_budgets(counts):
    """Whether each reader's page, and all of them, keep to their budgets (the pages over it, named)."""
    over = {n: c for n, c in counts.items() if c > BUDGETS.get(n, ALL_READERS)}
    assert not over and sum(counts.values()) <= ALL_READERS, counts
    return True


def test_every_saving_figure_on_every_page_is_the_one_functions(built_reports):
    assert saving_figures(built_reports.out) > 20


def test_reader_pages_keep_to_their_budgets(built_reports):
    counts = reader_words(built_reports.out)
    assert len(counts) == 5 and within_budgets(counts)


def test_the_detail_left_to_the_full_version_is_one_linked_sentence(built_reports):
    rendered = {r.name: r for r in built_reports.rendered}
    reader = rendered["02-context-cost"].reader.read_text()
    full = rendered["02-context-cost"].html.read_text()
    links = re.findall(r'href="(02-context-cost\.html#(wismo-detail-\d+))"', reader)
    assert len(links) >= 5
    for _, anchor in links:
        assert f'id="{anchor}"' in full and f'id="{anchor}"' not in reader
    # The calibration's sixteen framings and the package versions are in the full version only.
    assert "Sensitivity" in text(full) or "sensitivity" in text(full)
    assert (
        "Per client profile and definition method" in full and "Per client profile and definition method" not in reader
    )


def test_scripted_runs_are_titled_so_and_a_repeated_group_is_said_once(built_reports):
    runs = json.loads((built_reports.out / "recorded-runs.json").read_text())
    assert runs["title"] == "Scripted runs: no model" and not any(g["liveModel"] for g in runs["groups"])
    scripted, imported = runs["groups"]
    assert imported["repeats"] == scripted["label"] and scripted["repeats"] is None
    # Imported traces of the stand-in are not a model's runs, and never labelled measured.
    assert imported["kinds"]["turns"].startswith("scripted (no model)")
    assert not imported["kinds"]["tokens"].startswith("measured")
    page = next(r for r in built_reports.rendered if r.name == "03-recorded-runs")
    reader = text(page.reader.read_text())
    assert page.title == "Scripted runs: no model" and "Scripted runs: no model" in reader
    assert "No model ran: every run here is the scripted stand-in" in reader
    assert reader.count("imported traces, model scripted-v1") == 1, "the repeated group is said once"
    assert "so they are not shown again" in reader


def test_a_section_with_no_data_is_left_out_and_the_index_says_how_to_get_it(built_reports):
    # No make fuzz in this build: nothing describes it, and the index names the command that brings it.
    reader = text(next(r for r in built_reports.rendered if r.name == "01-equivalence").reader.read_text())
    assert "make fuzz" not in reader and "Sessions abandoned" not in reader
    index = text((built_reports.out / "index.html").read_text())
    assert (
        "Not in this build hostile input at scale on the study's servers (report 01): make fuzz , then make report"
        in index
    )


def test_the_verdict_needs_the_context_cost_result(tmp_path):
    assert verdict.answer(tmp_path) is None


def test_report_05_predicts_the_replacement_by_the_one_accounting_and_shows_the_check(built_reports):
    traces = json.loads((built_reports.out / "traces.json").read_text())
    check = traces["checks"][0]
    assert check["replacement"] == "get_order_support_context" and abs(check["errorPercent"]) <= 5
    page = text(next(r for r in built_reports.rendered if r.name == "05-traces").reader.read_text())
    assert f"Checked: {check['chain']} replaced by get_order_support_context holds within 5%" in page
