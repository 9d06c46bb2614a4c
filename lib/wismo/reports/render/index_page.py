"""outputs/index.html: one entry per report, with its key figures, when it ran, and links to both versions; a failed
build's index says why it stopped and shows the failed report as far as it ran."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from wismo.core.kinds import MEANINGS
from wismo.reports.render.figures import Figure
from wismo.reports.verdict import Answer


@dataclass
class Rendered:
    """One executed notebook: its title, what it shows, its key figures, when it ran, and where its copies went."""

    name: str
    title: str
    summary: str
    executed: Path
    html: Path
    reader: Path
    ran_at: str = ""
    duration_s: float = 0.0
    figures: list[Figure] = field(default_factory=list)


@dataclass
class Failure:
    """Why a build stopped, in one `sentence`; the folder it left as it was (`target`); the report that failed
    (`name`, `title`) with what of it was written (`pages`: its executed notebook and both versions as far as it ran,
    those that could be rendered); and the reports it never ran (`not_run`)."""

    sentence: str
    target: Path
    name: str = ""
    title: str = ""
    pages: list[Path] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)


STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;
  line-height:1.5;color:#1f2328}
h1{margin-bottom:.2rem}h2{margin:0 0 .3rem;font-size:1.3rem}
a{color:#0550ae}
.intro{color:#57606a;margin-top:0}
.report{border:1px solid #d0d7de;border-radius:8px;padding:1rem 1.2rem;margin:1.2rem 0}
.summary{margin:.2rem 0 .8rem}
.figures{list-style:none;padding:0;margin:0 0 .8rem;display:grid;
grid-template-columns:repeat(auto-fill,minmax(14rem,1fr));gap:.6rem}
.figures li{background:#f6f8fa;border-radius:6px;padding:.4rem .7rem}
.value{display:block;font-size:1.35rem;font-weight:600;font-variant-numeric:tabular-nums}
.label{display:block;font-size:.9rem}
.kind{display:block;font-size:.78rem;color:#57606a;font-style:italic}
.links{margin:.4rem 0 0;font-size:.95rem}
.links a{margin-right:1rem}
.meta{color:#57606a;font-size:.9rem;margin:0}
.none{color:#57606a;font-style:italic}
footer{color:#57606a;font-size:.85rem;border-top:1px solid #d0d7de;margin-top:2rem;padding-top:.6rem}
.stopped{border:2px solid #cf222e;border-radius:8px;padding:.7rem 1rem;background:#fff5f5}
.report.failed{border-color:#cf222e}
.answer{font-size:1.08rem}.answer p{margin:.3rem 0}.answer img{max-width:100%;height:auto;margin:.5rem 0}
.legend{font-size:.85rem;color:#57606a;margin:.4rem 0 0}.legend b{color:#1f2328;font-weight:600}
"""


def when(iso: str) -> str:
    """A papermill timestamp as a reader sees it: 2026-10-08 12:00 UTC."""
    try:
        moment = datetime.fromisoformat(iso)
    except (TypeError, ValueError):
        return "at an unknown time"
    if moment.tzinfo is None:
        return moment.isoformat(" ", "minutes")
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _link(target: Path, out: Path) -> str:
    """A link relative to the index, escaped for an attribute."""
    return html.escape(target.relative_to(out).as_posix(), quote=True)


def entry(r: Rendered, out: Path) -> str:
    """One report's block: title, one line, key figures, when it ran, links to both versions and its data."""
    esc = html.escape
    figures = (
        "".join(
            f'<li><span class="value">{esc(f.value)}</span><span class="label">{esc(f.label)}</span>'
            + (f'<span class="kind">{esc(f.kind)}</span>' if f.kind else "")
            + "</li>"
            for f in r.figures
        )
        or '<li class="none">This notebook declares no key figures.</li>'
    )
    data = sorted({f.file for f in r.figures})
    data_links = "".join(f'<a href="{esc(name, quote=True)}">{esc(name)}</a>' for name in data)
    return (
        f'<article class="report" id="{esc(r.name, quote=True)}">'
        f'<h2><a href="{_link(r.reader, out)}">{esc(r.title)}</a></h2>'
        f'<p class="summary">{esc(r.summary)}</p>'
        f'<ul class="figures">{figures}</ul>'
        f'<p class="links"><a href="{_link(r.reader, out)}">Read</a>'
        f'<a href="{_link(r.html, out)}">With code</a>'
        f'<a href="{_link(r.executed, out)}">Notebook</a>{data_links}</p>'
        f'<p class="meta"><time datetime="{esc(r.ran_at, quote=True)}">{esc(when(r.ran_at))}</time>, '
        f"{r.duration_s:.1f} s</p>"
        "</article>"
    )


# What each kind of number means, in one line under the title: a reader of the index alone must not mistake them.
KINDS = tuple(MEANINGS.items())


def legend(rendered: Sequence[Rendered]) -> str:
    """What each kind of number on the page means, for the kinds its figures name."""
    named = " ".join(f.kind for r in rendered for f in r.figures)
    used = [(k, v) for k, v in KINDS if k in named] or list(KINDS)
    return "Kinds of numbers: " + "; ".join(f"<b>{html.escape(k)}</b>: {html.escape(v)}" for k, v in used) + "."


# How a page of a failed report is named in its links, by the end of its file name.
AS_FAR = {".ipynb": "Executed notebook", "-reader.html": "Reader's version", ".html": "Full version with code"}


def failed_entry(failure: Failure, out: Path) -> str:
    """The failed report's block: its title, why it stopped, and links to what of it was written; then the reports
    that never ran."""
    esc = html.escape
    links = "".join(
        f'<a href="{_link(page, out)}">{next(v for k, v in AS_FAR.items() if page.name.endswith(k))}</a>'
        for page in failure.pages
    )
    block = (
        f'<article class="report failed" id="{esc(failure.name, quote=True)}"><h2>{esc(failure.title)}</h2>'
        f'<p class="summary">{esc(failure.sentence)}</p>'
        + (f'<p class="links">As far as it ran: {links}</p>' if links else "")
        + "</article>"
        if failure.name
        else ""
    )
    if failure.not_run:
        block += f"<p class='meta'>Not run, as the build stopped first: {esc(', '.join(failure.not_run))}.</p>"
    return block


def inline(text: str) -> str:
    """A verdict sentence's Markdown (**bold**, `code`) as HTML, everything else escaped."""
    escaped = html.escape(text)
    escaped = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", escaped)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", escaped)


def answer_block(found: Answer) -> str:
    """The study's answer: its sentences, then its picture (an inline PNG with its title and finding as alt text)."""
    from wismo.reports.render.answer_chart import answer_requests
    from wismo.reports.render.display import Shown

    picture = Shown(
        answer_requests(found.rows, found.case, found.key, found.profile, found.published),
        "Every later request resends the whole history, so the design with fewer requests carries less.",
    )
    return (
        "<section class='answer'>"
        + "".join(f"<p>{inline(s)}</p>" for s in found.sentences)
        + f"<img src='data:image/png;base64,{picture.png}' alt='{html.escape(picture.alt, quote=True)}'>"
        + "</section>\n"
    )


def render(
    rendered: Sequence[Rendered],
    out: Path,
    title: str | None = None,
    failure: Failure | None = None,
    intro: str = "",
    left_out: Sequence[str] = (),
    found: Answer | None = None,
) -> str:
    """The whole index page as HTML text (self-contained: inline style, no script, no external file): the study's
    title and what it compares (`intro`), one entry per report, each report left out with why; `failure`, for a
    build that stopped, says why and where the previous build is."""
    entries = "\n".join(entry(r, out) for r in rendered)
    heading = f"wismo: {html.escape(title)}" if title else "wismo reports"
    stopped = ""
    if failure is not None:
        heading += ": the build stopped"
        stopped = (
            f"<p class='stopped'><b>This build stopped</b>: {html.escape(failure.sentence)} The reports in "
            f"{html.escape(str(failure.target))} are as they were before it; this folder holds what it wrote.</p>\n"
        )
        entries += "\n" + failed_entry(failure, out)
    missing = (
        "<section class='left-out'><h2>Not in this build</h2><ul>"
        + "".join(f"<li>{inline(x)}</li>" for x in left_out)
        + "</ul></section>\n"
        if left_out
        else ""
    )
    return (
        "<!doctype html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{heading}</title><style>{STYLE}</style></head><body>"
        f"<h1>{heading}</h1>"
        + (answer_block(found) if found is not None else "")
        + (f"<p class='intro'>{html.escape(intro)}</p>\n" if intro else "")
        + f"<p class='legend'>{legend(rendered)}</p>\n"
        f"{stopped}{entries}\n{missing}"
        "</body></html>\n"
    )
