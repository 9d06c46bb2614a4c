"""`wismo study run`: the equivalence and context-cost notebooks executed on a study into its own folder, both HTML
versions of each and an index; the built-in outputs/ is never touched."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wismo.core.errors import InputError
from wismo.core.paths import DATA, NOTEBOOKS, OUTPUTS, REPO_ROOT, STUDY_OUTPUTS
from wismo.reports import REPORTS
from wismo.studies import matching
from wismo.studies.declaration import Study

NOTEBOOKS_RUN = ("01-equivalence", "02-context-cost")  # every study's reports
RECORDED = "03-recorded-runs"  # added when the study has recorded runs (wismo evaluate)
SCALE = "04-scale"  # added when wismo serves every design: its generated cases drive them
TRACES = "05-traces"  # added when the study declares OpenTelemetry trace files (its `traces` key)
# Errors a notebook meets when a server answers otherwise than the study file says: said as the file's problem.
DECLARATION_ERRORS = ("NoStructuredContent", "PatternReadsNothing")


class StudyRefused(InputError):
    """A study run that cannot start as asked (its output folder would be the built-in reports'), or whose study
    file asks what its server does not send: `out`, and `staged` (staging.Staged) when a build had begun."""

    def __init__(self, message: str, out: Path, staged: Any = None) -> None:
        super().__init__(message)
        self.out = out
        self.staged = staged


@dataclass
class StudyRun:
    """What a study run produced: the folder, the pages rendered, the cases whose evidence differs, and, when they
    do, the staging folder holding the report as far as it ran (`staged`, a staging.Staged; `out` is as it was)."""

    out: Path
    rendered: list[Any] = field(default_factory=list)
    differing: list[str] = field(default_factory=list)
    unfollowed: list[str] = field(default_factory=list)  # links that found nothing to follow, a sentence each
    staged: Any = None


def out_folder(study: Study, out: str | Path | None) -> Path:
    """Where the study's reports go: `out`; else, for a study file in this checkout, outputs/studies/<file stem>/,
    and for any other, a folder beside the file, <file stem>-reports/ (a team's study keeps its reports with it, not
    in wismo's checkout); never outputs/ itself."""
    inside = study.path.resolve().is_relative_to(REPO_ROOT.resolve())
    default = STUDY_OUTPUTS / study.stem if inside else study.path.resolve().parent / f"{study.stem}-reports"
    path = Path(out).resolve() if out else default
    if path == OUTPUTS.resolve():
        raise StudyRefused(f"{path} holds the built-in reports; a study writes to a folder of its own", path)
    if (path / "notebooks").resolve() == NOTEBOOKS.resolve() or (path / "data").resolve() == DATA.resolve():
        raise StudyRefused(f"{path} is the repository itself; give a folder of the study's own, such as /tmp/out", path)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _comparison(out: Path) -> dict[str, Any] | None:
    """The comparison written into `out`, if the run got that far."""
    import json

    path = out / REPORTS["01-equivalence"][1]
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def unfollowed_links(out: Path) -> list[str]:
    """The links of the comparison written into `out` that found nothing to follow in any case, a sentence each."""
    result = _comparison(out)
    return [x["sentence"] for x in result.get("unfollowedLinks", [])] if result else []


def differing_cases(out: Path) -> list[str]:
    """The cases whose evidence differs in the comparison written into `out`: a sentence each, with the first
    difference."""
    result = _comparison(out)
    if result is None:
        return []
    lines = []
    for r in result["cases"]:
        if not r["equal"]:
            said = matching.said(r["differences"][0], result["summary"]["reference"])
            lines.append(f"case {r['label']!r} ({r['input']}): {said}")
    return lines


def plan(study: Study, parameters: dict[str, object] | None = None) -> tuple[list[Path], dict[str, object], list[str]]:
    """The study's notebooks, the parameters every one is given (the study's file first, which each kernel reads
    once) and, for each report left out, why: every study gets 01 and 02, 03 when it has recorded runs, 04 when
    wismo serves every design, 05 when it declares trace files."""
    from wismo import runs
    from wismo.studies.declaration import NEEDS

    params = {"study": str(study.path.resolve()), **(parameters or {})}
    stems, left_out = list(NOTEBOOKS_RUN), []
    if runs.find(study.runs_folder):
        stems.append(RECORDED)
        params.setdefault("runs_dir", str(study.runs_folder))
    else:
        left_out.append(f"{RECORDED}: the study has no recorded runs yet (record them with wismo evaluate)")
    if study.meets("served"):
        stems.append(SCALE)
    else:
        left_out.append(f"{SCALE}: {NEEDS['served']}")
    if study.traces:
        stems.append(TRACES)
    else:
        left_out.append(f"{TRACES}: the study declares no OpenTelemetry traces (its `traces` key)")
    return [NOTEBOOKS / f"{stem}.ipynb" for stem in stems], params, left_out


def run(
    study: Study,
    out: str | Path | None = None,
    parameters: dict[str, object] | None = None,
    jobs: int | None = None,
) -> StudyRun:
    """Execute the study's notebooks into its folder and render them; a differing case is reported, not raised (its
    notebook is rendered as far as it ran, in the build's staging folder: the folder keeps its previous reports)."""
    from wismo.reports.render import build

    folder = out_folder(study, out)
    paths, params, left_out = plan(study, parameters)
    try:
        rendered = build.build(
            paths, folder, jobs, params, title=study.title, intro=study.description, left_out=tuple(left_out)
        )
    except build.NotebookFailed as failed:
        if failed.ename in DECLARATION_ERRORS:  # the file says to read what the server does not send: one sentence
            raise StudyRefused(failed.evalue, folder, failed.staged) from None
        # What the run wrote, the report as far as it ran included (build renders it), is in the staging folder.
        if failed.staged is None:  # build() could not index the folder it left: its note says why
            raise
        staging = failed.staged.folder
        differing = differing_cases(staging)
        if failed.ename != "ClaimFailed" or not differing:
            raise
        return StudyRun(folder, [], differing, unfollowed_links(staging), failed.staged)
    return StudyRun(folder, rendered, differing_cases(folder), unfollowed_links(folder))
