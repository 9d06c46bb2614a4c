"""Notebooks run headless under papermill, stop loudly on a failed check, and are stored clean."""

import html
import json
import re
import shutil

import anyio
import papermill
import pytest

from wismo.core.paths import DEFAULT_FIXTURES, NOTEBOOKS
from wismo.mcp.client.connection import HarnessError
from wismo.reports import context_cost, equivalence
from wismo.reports.render import build as report
from wismo.reports.render.versions import FULL_ONLY

NOTEBOOK_PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))


def committed_form(path, content: bytes | None = None) -> dict:
    """What git would commit for a notebook: the working copy (or `content` at its path) through the clean filter
    .gitattributes names for it, as `make` sets it up in this working copy."""
    import subprocess

    def git(*args):
        return subprocess.run(["git", *args], cwd=path.parent, capture_output=True, text=True, check=False)

    if git("rev-parse", "--is-inside-work-tree").returncode != 0:
        pytest.skip("not a git working copy: nothing is committed from here")
    name = git("check-attr", "filter", "--", path.name).stdout.rsplit(": ", 1)[-1].strip()
    assert name == "nbstripout", f".gitattributes names no notebook filter for {path.name}: {name!r}"
    clean = git("config", "--get", f"filter.{name}.clean").stdout.strip()
    assert clean, "the notebook filter is not set up in this working copy: `make notebook-filter` sets it"
    done = subprocess.run(
        clean, shell=True, input=path.read_bytes() if content is None else content, capture_output=True, check=True
    )
    return json.loads(done.stdout)


def test_the_filter_strips_what_a_run_in_jupyterlab_saves():
    path = NOTEBOOK_PATHS[0]
    stored = json.loads(path.read_text())
    ran = json.loads(path.read_text())
    ran["metadata"]["language_info"] = {"name": "python", "version": "3.11.7", "mimetype": "text/x-python"}
    ran["metadata"]["papermill"] = {"duration": 1.0}
    for i, cell in enumerate(c for c in ran["cells"] if c["cell_type"] == "code"):
        cell["execution_count"] = i + 1
        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "hello\n"}]
        cell["metadata"]["execution"] = {"iopub.status.idle": "2026-12-03T12:00:00Z"}
        cell["metadata"]["papermill"] = {"duration": 0.1}
        cell["metadata"]["scrolled"] = True
    assert committed_form(path, json.dumps(ran, indent=2).encode()) == stored


@pytest.mark.parametrize("path", NOTEBOOK_PATHS, ids=lambda p: p.name)
def test_stored_without_outputs_and_parameterised(path):
    nb = committed_form(path)  # a run saved in the working copy commits without its outputs
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(not c["outputs"] and c["execution_count"] is None for c in code)
    assert sum("parameters" in c.get("metadata", {}).get("tags", []) for c in code) == 1
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    assert nb["metadata"]["wismo"]["summary"]


def test_report_executes_renders_and_indexes(built_reports):
    tmp_path, rendered = built_reports.out, built_reports.rendered
    assert [r.name for r in rendered] == [p.stem for p in NOTEBOOK_PATHS]
    index = (tmp_path / "index.html").read_text()
    for r in rendered:
        assert r.html.exists() and f'href="html/{r.html.name}"' in index
        assert r.reader.exists() and f'href="html/{r.reader.name}"' in index
        assert html.escape(r.title) in index and html.escape(r.summary) in index
        assert r.ran_at.startswith("20") and f'datetime="{r.ran_at}"' in index
        for f in r.figures:
            assert html.escape(f.value) in index and html.escape(f.label) in index
    page = (tmp_path / "html" / "01-equivalence.html").read_text()
    assert "6/6 cases equal</strong>" in page or "6/6 cases equal" in page and page.count("data:image/png;base64") >= 2
    comparison = json.loads((tmp_path / "deterministic-comparison.json").read_text())
    assert comparison["summary"]["allEqual"] is True
    context = json.loads((tmp_path / "context-cost.json").read_text())
    assert context["caseStudy"]["broad"]["total"] == 420000 and context["caseStudy"]["scoped"]["total"] == 73500
    assert all(row["match"] for row in context["caseStudyChecks"])
    assert {r["orderId"] for r in context["ratios"]} == {f"ORD-100{i}" for i in range(1, 7)}
    assert all(r["designTotal"] < r["referenceTotal"] and r["design"] == "focused" for r in context["ratios"])
    assert context["labels"]["published"].startswith("provider-reported")
    assert context["calibrationSummary"]["additions"] == [275, 733] and context["calibrationSummary"]["derived"] == [
        287,
        714,
    ]
    recorded = json.loads((tmp_path / "recorded-runs.json").read_text())
    scripted, traced = recorded["groups"]  # the scripted runs, then those imported from the shipped traces
    assert traced["label"] == "imported traces, model scripted-v1" and len(traced["cases"]) == 12
    assert scripted["kinds"]["runs"] == "scripted (no model)" and scripted["backend"] == "scripted"
    medians = {m["measure"]: m for m in scripted["medians"]}
    assert (medians["turns"]["granular"], medians["turns"]["focused"]) == (3, 2)
    assert medians["totalTokens"]["focused vs granular %"] < 0
    assert all(p["pass^k"] for p in scripted["passK"]) and len(scripted["cases"]) == 36
    runs_page = (tmp_path / "html" / "03-recorded-runs.html").read_text()
    assert "pass^k" in runs_page and runs_page.count("data:image/png;base64") >= 2
    assert "scripted reply" in runs_page and "the same conversations as the scripted backend" in runs_page
    assert (
        traced["kinds"]["tokens"]
        == "scripted (no model), tiktoken-estimated (imported traces; provider wismo.scripted)"
    )
    traces = json.loads((tmp_path / "traces.json").read_text())
    top = traces["chains"][traces["topLinkedChain"]]
    assert top["tools"] == ["get_order", "get_payment", "get_reservation", "get_tracking"]
    assert traces["headline"]["savedPerConversation"] > 0 and top["price"]["as"] == "gpt-4.1-mini-2025-04-14"
    traces_page = (tmp_path / "html" / "05-traces.html").read_text()
    assert "Checked: every model call read is counted in exactly one chain" in traces_page
    assert traces_page.count("data:image/png;base64") >= 1
    cost_page = (tmp_path / "html" / "02-context-cost.html").read_text()
    assert (
        "420,000" in cost_page and "tiktoken-estimated" in cost_page and cost_page.count("data:image/png;base64") >= 4
    )


def test_key_figures_come_from_the_results(built_reports):
    figures = {r.name: {f.label: f for f in r.figures} for r in built_reports.rendered}
    assert all(1 <= len(f) <= 3 for f in figures.values()), {n: len(f) for n, f in figures.items()}
    comparison = json.loads((built_reports.out / "deterministic-comparison.json").read_text())["summary"]
    equal = figures["01-equivalence"]["cases whose evidence agrees with the reference's (granular)"]
    assert equal.value == f"{comparison['casesEqual']}/{comparison['cases']}" == "6/6" and equal.kind == "measured"
    cost = json.loads((built_reports.out / "context-cost.json").read_text())
    saving = next(f for label, f in figures["02-context-cost"].items() if label.startswith("median of the cases"))
    (focused,) = cost["verdict"]["savings"]
    assert saving.value == f"focused {focused['says']} than granular" and "python profile" in saving.label
    assert "range from bare text to the best-fitting framing, csharp-raw-element" in saving.kind
    reproduced = figures["02-context-cost"]["figures the case study printed, reproduced from its assumptions"]
    assert reproduced.value == "8/8" and reproduced.kind.startswith("modelled")
    runs = figures["03-recorded-runs"]
    tokens = runs["median input tokens per case over these runs"]
    assert tokens.value == saving.value  # the scripted runs' conversations are the modelled ones
    assert (
        tokens.kind == "scripted (no model), tiktoken-estimated (python profile); scripted backend, model scripted-v1"
    )
    passk = runs["cases and designs where every repetition passed (pass^k)"]
    assert passk.value == "12/12" and passk.kind.startswith("scripted (no model): scored")
    turns = runs["median model turns per conversation"]
    assert turns.value == "granular 3, focused 2"  # the study's designs in its order, the reference first
    assert turns.kind.startswith("scripted (no model): fixed by the script's rules")
    for r in built_reports.rendered:  # every token and price figure names the client profile it assumes
        for f in r.figures:
            if re.search(r"saving|conversations on|USD|tokens per|window", f.label) and "case study" not in f.label:
                assert "profile" in f.label + f.kind, (r.name, f.label)
    assert set(cost) - {"kinds"} <= set(cost["kinds"]) | set(context_cost.NOT_FIGURES)


def test_the_calibration_reads_the_sources_as_released(built_reports):
    # The calibration's forensic detail stands in the full version.
    reader = html.unescape((built_reports.out / "html" / "02-context-cost.html").read_text(encoding="utf-8"))
    assert "first released in 9.4.0-preview.1.25207.5" in reader and "there is no 9.2.x package" in reader
    assert "9.0.0 to 9.2.x" not in reader and "released code paths" not in reader
    assert "call_cqXeuxQPiA9BEepDEw5oVh2I" in reader and "294 / 809" in reader  # with call_id at the article's id
    for verdict in ("fails the lower bound by", "fails the upper bound by"):
        assert verdict in reader
    assert "+ as \\u002B" in re.sub(r"<[^>]+>", "", reader)  # the default encoder's escape of + named


def test_every_key_figure_is_found_in_its_report(built_reports):
    # The index shows no number its report does not: each number of a card stands in the reader's version.
    for r in built_reports.rendered:
        text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", r.reader.read_text(encoding="utf-8"))).split())
        for f in r.figures:
            for number in re.findall(r"-?\d[\d,]*(?:\.\d+)?", f.value):
                number = number.rstrip(",")
                assert re.search(rf"(?<![\d.,]){re.escape(number)}(?![\d]|\.\d)", text), (r.name, f.label, number)


def test_the_report_sends_hostile_input_to_the_articles_own_servers(built_reports):
    from wismo.checks.hostile import STUDY_COUNT

    sent = json.loads((built_reports.out / "hostile.json").read_text(encoding="utf-8"))
    assert sent["count"] == STUDY_COUNT and [d["design"] for d in sent["designs"]] == ["granular", "focused"]
    assert sent["findings"] == [] and sent["totals"]["cases"] > 0
    assert set(sent["designs"][0]["arguments"]) == {"get_order", "get_payment", "get_reservation", "get_tracking"}
    reader = html.unescape((built_reports.out / "html" / "01-equivalence-reader.html").read_text(encoding="utf-8"))
    assert "Hostile input on this study's servers" in reader
    assert "get_order_support_context" in reader and "no findings" in reader


def test_reader_version_hides_code_and_keeps_every_chart(built_reports):
    for r in built_reports.rendered:
        full, reader = r.html.read_text(), r.reader.read_text()
        assert "hl-ipython3" in full and "hl-ipython3" not in reader  # highlighted code cells
        assert 'data-mime-type="application/vnd.jupyter.stderr"' not in reader  # progress bars, warnings
        nb = json.loads(r.executed.read_text(encoding="utf-8"))
        left = sum(
            "image/png" in o.get("data", {})
            for c in nb["cells"]
            if FULL_ONLY in c["metadata"].get("tags", [])
            for o in c.get("outputs", [])
        )
        assert reader.count('src="data:image/png;base64,') == full.count('src="data:image/png;base64,') - left
        assert (
            f'href="{r.html.name}"' in reader and f'href="{r.reader.name}"' in full and 'href="../index.html"' in full
        )
        for page in (full, reader):
            # Self-contained: nothing fetched from a CDN or anywhere else.
            assert not re.search(r'(src|href)="(https?:)?//', page)


@pytest.mark.slow
def test_equivalence_notebook_stops_on_a_difference(tmp_path):
    fixtures = tmp_path / "fixtures"
    fixtures.mkdir()
    for f in DEFAULT_FIXTURES.glob("*.json"):
        shutil.copy(f, fixtures / f.name)
    payments = json.loads((fixtures / "payments.json").read_text())
    payments["records"][0]["amount"] = "130.00"  # PAY-1001, seen only by the focused server
    (fixtures / "payments.json").write_text(json.dumps(payments))
    with pytest.raises(papermill.PapermillExecutionError) as err:
        report.execute(
            NOTEBOOKS / "01-equivalence.ipynb",
            tmp_path,
            {
                "env": {"focused": {"WISMO_FIXTURES": str(fixtures)}},
                "include_unfriendly": False,
                "transports": ["stdio"],
            },
        )
    message = f"{err.value.ename}: {err.value.evalue}"
    assert "ClaimFailed" in message
    assert "delivered on time" in message and "payment.amount" in message


@pytest.mark.anyio
async def test_equivalence_report_stops_with_the_servers_failure(tmp_path):
    # The notebook's first cell is this build; papermill stops on whatever it raises (tested above).
    with pytest.raises(HarnessError) as err:
        await equivalence.build(
            {
                "env": {"focused": {"WISMO_FIXTURES": "/nonexistent/fixtures"}},
                "transports": ["stdio"],
                "output_dir": str(tmp_path),
            }
        )
    message = str(err.value)
    assert "focused server over stdio" in message and "orders.json is missing" in message
    assert not (tmp_path / equivalence.OUTPUT).exists()  # nothing half written


def test_a_report_refuses_an_unknown_parameter():
    from wismo.reports.params import ParameterError

    with pytest.raises(ParameterError, match="takes no such parameter; it takes orders, transports"):
        anyio.run(equivalence.build, {"transport": "stdio"})


def _chart_functions() -> set[str]:
    """The names of charts.* and price_charts.* functions that draw a chart (they return a Figure)."""
    import inspect

    from wismo.reports.render import charts, price_charts

    return {
        f"{module.__name__.rsplit('.', 1)[1]}.{name}"
        for module in (charts, price_charts)
        for name, fn in vars(module).items()
        if inspect.isfunction(fn)
        and not name.startswith("_")
        and fn.__module__ == module.__name__
        and "Figure" in str(fn.__annotations__.get("return"))
    }


CHART_CALL = re.compile(r"\b((?:price_)?charts\.\w+)\(")


def charts_without_image(executed) -> list[str]:
    """The code cells of an executed notebook that call a chart function more often than they show a PNG, each as
    'In [n]: the chart calls'."""
    drawing = _chart_functions()
    nb = json.loads(executed.read_text(encoding="utf-8"))
    missing = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        if not cell["outputs"] and cell["metadata"].get("wismo", {}).get("drawsWith"):
            continue  # it draws only from a file this build did not have (say, fuzz.json); test_cli runs it with one
        calls = [c for c in CHART_CALL.findall("".join(cell["source"])) if c in drawing]
        images = [o for o in cell["outputs"] if "image/png" in o.get("data", {})]
        if len(images) < len(calls):
            missing.append(f"In [{cell['execution_count']}]: {', '.join(calls)} ({len(images)} PNG shown)")
    return missing


def test_every_chart_a_cell_draws_is_shown(built_reports):
    for r in built_reports.rendered:
        assert not charts_without_image(r.executed), f"{r.executed.name}: {charts_without_image(r.executed)}"
        nb = json.loads(r.executed.read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            for o in cell.get("outputs", []):
                if "image/png" in o.get("data", {}):  # alt text: the chart's title and the finding shown above it
                    assert o.get("metadata", {}).get("image/png", {}).get("alt"), f"{r.executed.name}: a PNG has no alt"


CODE_SPAN = re.compile(r"(`+)[^`]*?\1")
DOLLAR = re.compile(r"(?<!\\)\$")


def read_as_maths(text: str) -> list[str]:
    """The paragraphs of Markdown JupyterLab would typeset as maths: two or more unescaped dollar signs outside code
    (its removeMath takes the text from one `$` to the next, paragraph by paragraph, and leaves code alone)."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return [p for p in re.split(r"\n\s*\n", text) if len(DOLLAR.findall(CODE_SPAN.sub("", p))) >= 2]


def test_a_maths_pair_is_found_as_jupyterlab_finds_it():
    assert read_as_maths("costs $1.18 granular and $0.62 focused") and read_as_maths("$$x$$")
    assert not read_as_maths("costs USD 1.18 and `$0.62` in code") and not read_as_maths(r"\$1.18 and \$0.62")
    assert not read_as_maths("one $5 note\n\nand another $3 one")  # a pair must share a paragraph


def test_no_displayed_text_is_read_as_maths(built_reports):
    for r in built_reports.rendered:
        nb = json.loads(r.executed.read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            shown = ["".join(cell["source"])] if cell["cell_type"] == "markdown" else []
            for o in cell.get("outputs", []):
                shown += ["".join(o.get("data", {}).get(k, "")) for k in ("text/markdown", "text/html")]
            for text in shown:
                found = read_as_maths(re.sub(r"<[^>]+>", " ", text))
                assert not found, f"{r.name}: {found[0][:160]!r}"


def test_a_normal_run_writes_nothing_on_stderr(built_reports):
    # No progress bar in the build's kernels and no warning: a reader's page shows results, not a pink box.
    for r in built_reports.rendered:
        nb = json.loads(r.executed.read_text(encoding="utf-8"))
        said = [
            "".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", []) if o.get("name") == "stderr"
        ]
        assert not said, f"{r.name}: {said[0][:200]!r}"


def test_the_readme_picture_is_this_builds_answer(built_reports, tmp_path):
    # The README shows the answer in one picture, docs/answer.svg (`make picture`): it is this build's, byte for byte.
    from wismo.core.paths import REPO_ROOT
    from wismo.reports.render.answer_chart import write_picture

    drawn = write_picture(built_reports.out, tmp_path / "answer.svg").read_bytes()
    assert drawn == write_picture(built_reports.out, tmp_path / "again.svg").read_bytes()  # its bytes are its data's
    committed = REPO_ROOT / "docs" / "answer.svg"
    assert drawn == committed.read_bytes(), "docs/answer.svg is not this build's answer: run `make picture`"
    assert "](docs/answer.svg)" in (REPO_ROOT / "README.md").read_text(encoding="utf-8")
