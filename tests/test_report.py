"""Report building without the project's notebooks: both HTML versions, the index page, any notebook count."""

import base64
import io
import json
import re

import matplotlib.pyplot as plt
import nbformat
import papermill
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from tiny import tiny_notebook
from wismo.core.paths import NOTEBOOKS
from wismo.reports.render import build as report
from wismo.reports.render import index_page
from wismo.reports.render.figures import Figure


def _png() -> str:
    fig, ax = plt.subplots(figsize=(2, 1))
    ax.plot([0, 1], [0, 1])
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def _executed(tmp_path):
    """An executed notebook as papermill leaves it: code, a chart, a progress bar on stderr, a result table."""
    nb = new_notebook(
        cells=[
            new_markdown_cell("# A small report\n\nWhat it shows."),
            new_code_cell(
                "plots.some_chart(result);",
                outputs=[new_output("display_data", {"image/png": _png(), "text/plain": "<Figure>"})],
            ),
            new_code_cell(
                "with bar(3, 'cases') as p: ...",
                outputs=[new_output("stream", name="stderr", text=f"\rcases: {k}/3") for k in range(4)]
                + [new_output("stream", name="stderr", text="\n")],
            ),
            new_code_cell("print('done')", outputs=[new_output("stream", name="stdout", text="done\n")]),
        ]
    )
    nb.metadata["papermill"] = {"end_time": "2026-10-08T12:00:05.5+00:00", "duration": 5.5}
    path = tmp_path / "notebooks" / "05-small.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, path)
    return path


def test_full_and_reader_versions(tmp_path):
    executed = _executed(tmp_path)
    full = report.to_html(executed, tmp_path, title="A small report").read_text()
    reader = report.to_html(executed, tmp_path, reader=True, title="A small report").read_text()
    assert "some_chart" in full and "some_chart" not in reader
    assert "cases: 3/3" in full and "cases: 2/3" not in full  # the bar's final state only
    assert "cases: 3/3" not in reader  # the reader's version shows no progress bar
    assert "done" in full and "done" in reader
    assert full.count('src="data:image/png;base64,') == reader.count('src="data:image/png;base64,') == 1
    assert (
        "<title>A small report (reader&#39;s version)</title>" in reader
        or "<title>A small report (reader's version)</title>" in reader
    )
    assert (
        'href="../index.html"' in reader and 'href="05-small.html"' in reader and 'href="05-small-reader.html"' in full
    )
    for page in (full, reader):
        assert not re.search(r"<script[^>]+src=", page) and "cdnjs" not in page


def test_ran_reads_papermill_metadata(tmp_path):
    assert report.ran(_executed(tmp_path)) == ("2026-10-08T12:00:05.5+00:00", 5.5)


def test_index_page_lists_every_report_with_links_and_figures(tmp_path):
    entries = [
        report.Rendered(
            "01-a",
            "A <title>",
            "What A shows.",
            tmp_path / "notebooks/01-a.ipynb",
            tmp_path / "html/01-a.html",
            tmp_path / "html/01-a-reader.html",
            "2026-10-08T12:00:05+00:00",
            5.0,
            [
                Figure("6/6", "cases equal", "measured", "a.json"),
                Figure("ratio 5.7", "broad to scoped", "modelled", "a.json"),
            ],
        ),
        report.Rendered(
            "02-b",
            "B",
            "What B shows.",
            tmp_path / "notebooks/02-b.ipynb",
            tmp_path / "html/02-b.html",
            tmp_path / "html/02-b-reader.html",
            "",
            1.25,
            [],
        ),
    ]
    page = index_page.render(entries, tmp_path)
    assert page.count('<article class="report"') == 2
    assert "A &lt;title&gt;" in page and "What B shows." in page
    for href in (
        "html/01-a-reader.html",
        "html/01-a.html",
        "notebooks/01-a.ipynb",
        "a.json",
        "html/02-b-reader.html",
        "html/02-b.html",
    ):
        assert f'href="{href}"' in page
    assert (
        '<span class="value">6/6</span><span class="label">cases equal</span><span class="kind">measured</span>' in page
    )
    assert "ratio 5.7" in page and "declares no key figures" in page
    assert "2026-10-08 12:00 UTC" in page and "at an unknown time" in page and "1.2 s" in page
    assert "<script" not in page and "http" not in page
    # One line of legend under the title names every kind of number the cards show, before the first report.
    legend = page.index("class='legend'")
    assert legend < page.index('<article class="report"')
    shown = {"measured", "modelled"}
    for kind, _ in index_page.KINDS:
        assert (f"<b>{kind}</b>" in page) == (kind in shown), kind
    assert {"scripted (no model)", "derived from published", "server-reported"} <= {k for k, _ in index_page.KINDS}


def test_when():
    assert index_page.when("2026-10-08T14:00:00+02:00") == "2026-10-08 12:00 UTC"
    assert index_page.when("2026-10-08T12:00:00") == "2026-10-08 12:00"
    assert index_page.when("") == "at an unknown time"


def test_build_any_number_of_notebooks_with_a_progress_bar(tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    paths = [
        tiny_notebook(
            src / "01-one.ipynb", [{"label": "of four", "file": "01-one.json", "value": "{n}/{of}", "kind": "measured"}]
        ),
        tiny_notebook(src / "02-two.ipynb"),
    ]
    out = tmp_path / "out"
    rendered = report.build(paths, out)
    assert [r.name for r in rendered] == ["01-one", "02-two"]
    assert rendered[0].figures == [Figure("3/4", "of four", "measured", "01-one.json")] and rendered[1].figures == []
    index = (out / "index.html").read_text()
    assert "Tiny 01-one" in index and "Tiny 02-two" in index and "3/4" in index
    assert all(r.html.exists() and r.reader.exists() and r.ran_at for r in rendered)
    err = capsys.readouterr().err
    assert "reports" in err and "2/2" in err  # the terminal progress bar, one step per notebook
    assert json.loads((out / "01-one.json").read_text()) == {"n": 3, "of": 4}


def test_parallel_build_runs_notebooks_at_once_and_keeps_their_order(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    # The first notebook is the slowest, so the others finish before it: the index must not follow finishing order.
    paths = [
        tiny_notebook(src / "01-slow.ipynb", then="import time\ntime.sleep(3)"),
        tiny_notebook(src / "02-quick.ipynb"),
        tiny_notebook(src / "03-quick.ipynb"),
    ]
    out = tmp_path / "out"
    rendered = report.build(paths, out, jobs=2)
    assert [r.name for r in rendered] == ["01-slow", "02-quick", "03-quick"]
    index = (out / "index.html").read_text()
    assert index.index('id="01-slow"') < index.index('id="02-quick"') < index.index('id="03-quick"')
    spans = {r.name: _span(r.executed) for r in rendered}
    # 01 and 02 ran at the same time: each started before the other ended (one after the other, one would not have).
    slow, quick = spans["01-slow"], spans["02-quick"]
    assert quick[0] < slow[1] and slow[0] < quick[1], spans


def _span(executed):
    """Papermill's start and end time of an executed notebook."""
    from datetime import datetime

    meta = json.loads(executed.read_text())["metadata"]["papermill"]
    return datetime.fromisoformat(meta["start_time"]), datetime.fromisoformat(meta["end_time"])


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_failing_notebook_stops_the_build_and_is_named(tmp_path, jobs):
    src = tmp_path / "src"
    src.mkdir()
    paths = [
        tiny_notebook(src / "01-fine.ipynb"),
        tiny_notebook(src / "02-broken.ipynb", then="raise ValueError('the check failed')"),
    ]
    out = tmp_path / "out"
    with pytest.raises(papermill.PapermillExecutionError) as err:
        report.build(paths, out, jobs=jobs)
    assert isinstance(err.value, report.NotebookFailed)
    assert str(err.value).startswith("notebook 02-broken.ipynb failed at In [")
    assert err.value.ename == "ValueError" and "the check failed" in str(err.value)
    assert not (out / "index.html").exists() and not list(out.glob(".index*"))


def test_jobs_come_from_the_argument_the_environment_or_the_cores(monkeypatch):
    monkeypatch.setenv(report.JOBS_ENV, "3")
    assert report.jobs_wanted(5) == 5 and report.jobs_wanted() == 3
    monkeypatch.delenv(report.JOBS_ENV)
    assert report.jobs_wanted() >= 1
    for bad in (0, -1, "two"):
        with pytest.raises(ValueError, match="at least 1"):
            report.jobs_wanted(bad)


def test_the_longest_notebook_of_the_last_run_starts_first(tmp_path):
    out = tmp_path / "out"
    (out / "notebooks").mkdir(parents=True)
    for name, seconds in (("01-a", 3.0), ("02-b", 20.0)):
        nb = new_notebook()
        nb.metadata["papermill"] = {"end_time": "", "duration": seconds}
        nbformat.write(nb, out / "notebooks" / f"{name}.ipynb")
    (out / "notebooks" / "04-d.ipynb").write_text("{not json")  # left unreadable: only the hint is lost
    paths = [tmp_path / f"{name}.ipynb" for name in ("01-a", "02-b", "03-c", "04-d")]
    # Never run (03-c) or unreadable (04-d) first, in their order, then by the last run's duration, longest first.
    assert [p.stem for p in report._longest_first(paths, out)] == ["03-c", "04-d", "02-b", "01-a"]


def test_a_fresh_build_starts_the_heaviest_notebooks_first(tmp_path, monkeypatch):
    monkeypatch.setattr(report, "OUTPUTS", tmp_path / "no-outputs")  # no last run anywhere, as in a fresh clone
    paths = sorted(NOTEBOOKS.glob("*.ipynb"))
    order = [p.stem for p in report._longest_first(paths, tmp_path / "out")]
    # Each named notebook exists (a rename would silently lose the hint), and they lead, the rest in name order.
    assert set(report.HEAVIEST_FIRST) <= {p.stem for p in paths}
    rest = [p.stem for p in paths if p.stem not in report.HEAVIEST_FIRST]
    assert order == [*report.HEAVIEST_FIRST, *rest]
