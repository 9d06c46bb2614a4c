"""A study file read and checked: TOML (the standard library's tomllib) declaring the question, the designs (how
to reach each server and how its investigation follows links), the cases and the unfriendly inputs.

Every problem is one sentence naming the design (or the top level) and the key; all of them are gathered before
StudyInvalid is raised, so one run of `wismo study check` lists them all.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wismo.core import reference as sources
from wismo.core import templates
from wismo.core.errors import InputError
from wismo.studies import matching, schema
from wismo.studies.cases import StudyCase, check_unique, read_cases
from wismo.studies.designs import StudyDesign, ignored, read_design
from wismo.studies.problems import Problems, text
from wismo.studies.published import Published, read_published


class UnknownCase(InputError):
    """Cases asked for by key that the study does not have: `unknown`, and `known` (the keys it has)."""

    def __init__(self, unknown: Sequence[object], known: Sequence[object]) -> None:
        super().__init__(
            f"not a case of the study: {', '.join(map(str, unknown))}; the cases are {', '.join(map(str, known))}"
        )
        self.unknown = unknown
        self.known = known


class StudyInvalid(InputError):
    """A study file that cannot be used: `path` and `problems`, one sentence each."""

    def __init__(self, path: Path, problems: list[str]) -> None:
        super().__init__(f"{path}: " + " ".join(problems))
        self.path = path
        self.problems = problems


# What a report section may need beyond a study's designs and cases, and the sentence that says why it is left out
# where the study does not declare it (a notebook cell names its need in metadata wismo.needs).
NEEDS = {
    "published": "this study publishes no conversation with two or more requests ([published] in its file)",
    "case-study": "this study does not reproduce the context-budget case study (its file has no reproduce = [...])",
    "served": "not every design of this study is one wismo serves, so wismo's own generated cases cannot drive them",
}


@dataclass(frozen=True)
class Study:
    """A study: the question, the designs (the reference first), the cases and where the file lives."""

    path: Path
    title: str
    question: str
    instructions: str
    reference: str
    match: str
    key: str
    designs: dict[str, StudyDesign]
    cases: tuple[StudyCase, ...]
    unfriendly: tuple[StudyCase, ...] = ()
    description: str = ""
    setup: str = ""
    runs: Path | None = None  # where its recorded runs are kept (None: data/runs/studies/<file stem>/)
    traces: tuple[Path, ...] = ()  # OTLP JSON trace files of an agent using the designs (report 05 reads them)
    focus: str | None = None  # the key of the case drawn call by call (None: the first case's)
    reproduce: tuple[str, ...] = ()  # source documents whose worked numbers the reports reproduce
    published: Published | None = None  # provider-reported usage of real conversations, if declared
    ignore: tuple[str, ...] = ()  # object keys left out of matching wherever they occur (a clock's, say)

    def ignored(self, *designs: str) -> tuple[str, ...]:
        """The keys left out when these designs' evidence is set side by side: the study's and each design's."""
        keys = [*self.ignore, *(k for d in designs if d in self.designs for k in self.designs[d].ignore)]
        return tuple(dict.fromkeys(keys))

    @property
    def folder(self) -> Path:
        """The study file's folder: commands run there and relative paths start there."""
        return self.path.parent

    @property
    def stem(self) -> str:
        """The file's name without .toml: the study's folder under outputs/studies/."""
        return self.path.stem

    @property
    def focus_key(self) -> str:
        """The key of the case the reports draw call by call: the declared focus, else the first case's."""
        return self.focus if self.focus is not None else self.case_key(self.cases[0])

    @property
    def served(self) -> bool:
        """Whether wismo serves every design of the study (only then can its own generated cases drive them)."""
        return all(d.address.serve for d in self.designs.values())

    def meets(self, need: str) -> bool:
        """Whether the study declares what a report section needs (one of NEEDS)."""
        if need not in NEEDS:
            raise ValueError(f"unknown need {need!r}; the needs are {', '.join(NEEDS)}")
        return {
            "published": self.published is not None and any(len(c.requests) >= 2 for c in self.published.conversations),
            "case-study": "context-budget-case-study" in self.reproduce,
            "served": self.served,
        }[need]

    @property
    def runs_folder(self) -> Path:
        """Where `wismo evaluate` records the study's runs and notebook 03 reads them."""
        from wismo.core.paths import RUNS

        return self.runs if self.runs is not None else RUNS / "studies" / self.stem

    def question_for(self, case: StudyCase) -> str:
        """The user message that opens the investigation of one case."""
        text = templates.fill(self.question, case.fields)
        return templates.as_text(text)

    def case_key(self, case: StudyCase) -> str:
        """The value that names a case in tables (see `case_name`)."""
        return case_name(case.value(self.key), case.label)

    def select(self, keys: list[str] | None, unfriendly: bool = True) -> list[StudyCase]:
        """The cases named by key (or label), in the order asked (default all), then the unfriendly ones if asked;
        UnknownCase names any that is not a case."""
        known = {self.case_key(c): c for c in self.cases} | {c.label: c for c in self.cases}
        if keys is None:
            chosen = list(self.cases)
        else:
            unknown = [k for k in keys if not isinstance(k, str) or k not in known]
            if unknown:
                raise UnknownCase(unknown, [self.case_key(c) for c in self.cases])
            chosen = [known[k] for k in keys]
        return chosen + (list(self.unfriendly) if unfriendly else [])

    def narrowed(self, names: list[str] | None) -> Study:
        """The study with only the designs named (the reference always, first; None: every design it declares). A
        name the study does not declare may still be a design wismo serves: it is added as `serve = NAME` would add
        it; any other is StudyInvalid naming the designs there are."""
        if not names:
            return self
        from wismo.mcp.servers import designs as registry
        from wismo.studies.designs import served

        chosen = {self.reference: self.designs[self.reference]}
        for name in names:
            if name in self.designs:
                chosen[name] = self.designs[name]
            elif name in registry.names():
                chosen[name] = served(name)
            else:
                offered = ", ".join(registry.names())
                raise StudyInvalid(
                    self.path,
                    [
                        f'the study has no design "{name}": its designs are {", ".join(self.designs)}, and a design '
                        f"wismo serves may be named too ({offered})."
                    ],
                )
        return dataclasses.replace(self, designs=with_colors(chosen))

    def colors(self) -> dict[str, str]:
        """Each design's colour, by name."""
        return {name: d.color for name, d in self.designs.items()}


def load(path: str | Path) -> Study:
    """The study a file declares; StudyInvalid lists every problem, one sentence each (never a traceback). Read once
    per process: the same file, unchanged, gives the same Study (every report and command of a run shares it)."""
    path = Path(path)
    try:
        stat = path.stat()
    except OSError:
        return _read(path)
    return _loaded(path, path.resolve(), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=32)
def _loaded(path: Path, resolved: Path, mtime_ns: int, size: int) -> Study:
    """The study of one file as it is now (the file's identity and state are the cache key)."""
    return _read(path)


def _read(path: Path) -> Study:
    """The study a file declares, read and checked."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StudyInvalid(path, ["no such file."]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise StudyInvalid(path, [f"cannot be read ({exc})."]) from None
    except tomllib.TOMLDecodeError as exc:
        raise StudyInvalid(path, [f"is not valid TOML: {exc}."]) from None
    r = Problems(path)
    schema.check(r, raw)
    title, question, instructions = text(raw, "title"), text(raw, "question"), text(raw, "instructions")
    cases = read_cases(r, raw, "cases", required=True)
    unfriendly = read_cases(r, raw, "unfriendly", required=False)
    declared = raw.get("designs")
    found: dict[str, StudyDesign] = {}
    if not isinstance(declared, dict) or not declared:
        r.say("top level", "designs is missing: declare at least two, as [designs.NAME] tables")
    else:
        if len(declared) < 2:
            r.say("top level", "a study compares at least two designs; designs declares one")
        for i, (name, spec) in enumerate(declared.items()):
            design = read_design(r, path.parent, name, spec, i)
            if design is not None:
                found[name] = design
    # reference and key as the TOML has them, whatever their type: checked below, a problem said if not a name.
    reference: Any = raw.get("reference", next(iter(declared), None) if isinstance(declared, dict) else None)
    if isinstance(declared, dict) and declared and reference not in declared:
        r.say(
            "top level", f'reference names "{reference}", which is not a design; the designs are {", ".join(declared)}'
        )
    ignore = ignored(raw.get("ignore"))
    match = raw.get("match", matching.DEFAULT)
    key: Any = raw.get("key", next((k for k in cases[0].fields), None) if cases else None)
    if (cases or "key" in raw) and (not isinstance(key, str) or not key):  # no case read: its problems said
        r.say("top level", "key must name a case field")
    elif cases and any(key not in c.fields for c in cases):
        lacking = next(c.label for c in cases if key not in c.fields)
        r.say("top level", f'key names the field "{key}", which case "{lacking}" lacks')
    if question and templates.ITEM in templates.fields_named(question):
        r.say("top level", "question names {item}, which only a link's arguments take (the value the link follows)")
    if question and cases:
        _templates_filled(r, "top level", "question", question, cases + unfriendly)
    for name, design in found.items():
        how = design.investigation
        _templates_filled(r, f'design "{name}"', "entry.arguments", how.arguments, cases + unfriendly)
        for i, link in enumerate(how.links, start=1):
            _templates_filled(r, f'design "{name}"', f"links[{i}].arguments", link.arguments, cases + unfriendly)
    runs = text(raw, "runs")
    traces = (
        [t for t in raw.get("traces", []) if isinstance(t, str) and t.strip()]
        if isinstance(raw.get("traces"), list)
        else []
    )
    missing = [t for t in traces if not (path.parent / t).is_file()]
    if missing:
        r.say("top level", f"traces names {', '.join(missing)}, which is no file beside the study (paths are relative)")
    keys = [case_name(c.fields.get(key), c.label) for c in cases]
    focus = raw.get("focus")
    if focus is not None and not isinstance(focus, str):
        focus = case_name(focus, repr(focus))  # focus = 2 names the case whose key is 2
    if focus is not None and focus not in keys:
        r.say("top level", f"focus names {focus!r}, which is no case's key; the keys are {', '.join(map(str, keys))}")
    reproduce = raw.get("reproduce", [])
    known = sources.names()
    if not isinstance(reproduce, list) or any(x not in known for x in reproduce):
        r.say(
            "top level",
            f"reproduce must list source documents wismo reproduces ({', '.join(known)}), not {reproduce!r}",
        )
        reproduce = []
    published = read_published(r, raw.get("published"), path.parent, list(found), keys)
    check_unique(r, cases + unfriendly)
    if r.problems:
        raise StudyInvalid(path, r.problems)
    ordered = with_colors({reference: found[reference], **{n: d for n, d in found.items() if n != reference}})
    from wismo.domain.prompts import INSTRUCTIONS

    return Study(
        path=path,
        title=title or "",
        question=question or "",
        instructions=instructions or INSTRUCTIONS,
        reference=reference,
        match=match,
        key=key,
        designs=ordered,
        cases=tuple(cases),
        unfriendly=tuple(unfriendly),
        description=raw.get("description", "") if isinstance(raw.get("description"), str) else "",
        setup=raw.get("setup", "") if isinstance(raw.get("setup"), str) else "",
        runs=(path.parent / runs).resolve() if runs else None,
        traces=tuple((path.parent / t).resolve() for t in traces),
        focus=focus,
        reproduce=tuple(reproduce),
        published=published,
        ignore=ignore,
    )


def _templates_filled(r: Problems, where: str, key: str, template: object, cases: list[StudyCase]) -> None:
    """Each {field} a template names must be a field of every case ({item} is a link's, said where it is misused)."""
    for name in sorted(templates.fields_named(template) - {templates.ITEM}):
        lacking = [c.label for c in cases if name not in c.fields]
        if lacking:
            who = "no case has" if len(lacking) == len(cases) else f"case {lacking[0]!r} lacks"
            r.say(where, f"{key} names {{{name}}}, which {who}")


def with_colors(designs: dict[str, StudyDesign]) -> dict[str, StudyDesign]:
    """Every design with a colour: its own, else the first of the palette no other design of the study uses."""
    from wismo.studies.designs import PALETTE

    taken = {d.color.upper() for d in designs.values() if d.color}
    free = iter([c for c in PALETTE if c.upper() not in taken] + list(PALETTE))
    return {n: d if d.color else dataclasses.replace(d, color=next(free)) for n, d in designs.items()}


def article() -> Study:
    """The article's study, "Where is my order?" (data/studies/where-is-my-order.toml): the built-in reports."""
    from wismo.core.paths import ARTICLE_STUDY

    return load(ARTICLE_STUDY)


def case_name(value: object, label: str) -> str:
    """What names a case in tables, from its key field's value: the text, a number as it is written, else the
    case's label."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return json.dumps(value)
    return label


def chosen(study: str | Path | Study | None) -> Study:
    """A study given as a file, as a Study, or None for the article's."""
    if isinstance(study, Study):
        return study
    return article() if study in (None, "") else load(study)
