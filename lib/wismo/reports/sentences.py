"""The sentences and small tables the notebooks show around their figures, built from a report's result: every
number in them read from the result, none typed, so a notebook cell only displays them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from wismo.accounting.cost.saving import change
from wismo.core import paths, processes
from wismo.studies import matching

if TYPE_CHECKING:
    from wismo.core.investigation import FollowUp
    from wismo.studies.declaration import Study
    from wismo.studies.designs import StudyDesign


def case_study_table(cs: dict[str, Any]) -> list[dict[str, object]]:
    """The case study's sessions call by call: input and cumulative input of each design (modelled)."""
    return [
        {
            "model call k": k,
            "broad: input (tokens, modelled)": b,
            "broad: cumulative (tokens, modelled)": bc,
            "scoped: input (tokens, modelled)": s,
            "scoped: cumulative (tokens, modelled)": sc,
        }
        for k, b, bc, s, sc in zip(
            range(1, cs["calls"] + 1),
            cs["broad"]["inputs"],
            cs["broad"]["cumulative"],
            cs["scoped"]["inputs"],
            cs["scoped"]["cumulative"],
        )
    ]


def case_study_figure(key: str, cs: dict[str, Any]) -> str:
    """A figure the case study published, named in words with its unit (its JSON key is no reader's word)."""
    n, target = cs["calls"], cs["target"]
    words = {
        "broadTotal": "broad session: input of all calls (tokens)",
        "broadFinalCall": "broad session: input of the last call (tokens)",
        "scopedTotal": "scoped session: input of all calls (tokens)",
        "ratio": "broad to scoped session input (ratio)",
        "broadNextCallAfterSeventhTool": "broad session: input of the next call after one more tool call (tokens)",
        "scopedNextCallAfterSeventhTool": "scoped session: input of the next call after one more tool call (tokens)",
        "scopedMeetsTarget": f"scoped session within the {target:,}-token goal",
        "broadMeetsTarget": f"broad session within the {target:,}-token goal",
        "sumOfTurnIndices": f"earlier turns resent over {n} calls, 0 + 1 + … + {n - 1} (count)",
    }
    return words.get(key, key)


def case_study_checks_table(checks: list[dict[str, Any]], cs: dict[str, object]) -> list[dict[str, object]]:
    """Each figure the case study published beside the one computed here, in words: where the case study gives it
    (printed, or implied by what it prints) and whether the two agree."""
    return [
        {
            "figure": case_study_figure(c["figure"], cs),
            "the case study's figure (published)": c["published"],
            "where the case study gives it": "printed in its text"
            if c["printed by the source"]
            else "implied by its printed figures, not printed",
            "computed here (modelled)": c["computed"],
            "computed against published": "equal" if c["match"] else "DIFFERENT",
        }
        for c in checks
    ]


def kinds_sentence(kinds: list[str], notes: dict[str, str] | None = None) -> str:
    """What each kind of figure a report shows means, in one Markdown sentence, from the one definition
    (wismo.core.kinds.MEANINGS), with a report's note on where its figures of that kind come from."""
    from wismo.core.kinds import MEANINGS

    notes = notes or {}
    return (
        "Every figure is labelled with its kind: "
        + "; ".join(f"**{k}**, {MEANINGS[k]}" + (f" ({notes[k]})" if k in notes else "") for k in kinds)
        + "."
    )


def groups_sentence(groups: list[dict[str, Any]]) -> str:
    """The groups of verified runs in one Markdown sentence, counted in words that agree with their number."""
    n = len(groups)
    return (
        f"{n} group{'s' if n != 1 else ''} of runs, every run verified: "
        + "; ".join(f"**{g['label']}** ({g['kinds']['runs']}, tokens {g['kinds']['tokens']})" for g in groups)
        + "."
    )


def case_study_sentence(cs: dict[str, Any]) -> str:
    """What the case study's two sessions come to, in one Markdown paragraph (modelled)."""
    return (
        f"Broad tools process **{cs['broad']['total']:,}** input tokens in {cs['calls']} calls and scoped tools "
        f"**{cs['scoped']['total']:,}**, a ratio of **{cs['ratio']:.1f}** (modelled). The broad session's last call "
        f"carries {cs['broad']['final']:,} tokens; one more tool call would carry {cs['broad']['nextCall']:,} into the "
        f"next call, over the {cs['contextWindow']:,}-token window (broad sessions fail at call "
        f"{cs['broad']['failsAtCall']}), "
        f"against {cs['scoped']['nextCall']:,} for scoped tools. Scoped tools "
        f"{'meet' if cs['scoped']['meetsTarget'] else 'miss'} the {cs['target']:,}-token goal; broad tools "
        f"{'meet' if cs['broad']['meetsTarget'] else 'miss'} it."
    )


def study_intro(study: Study) -> str:
    """What a study compares, in one Markdown paragraph: its file, question, designs, cases and match."""

    def server(d: StudyDesign) -> str:
        if d.address.serve or d.address.url:
            return f"`{d.address.describe()}`"
        # The interpreter and the study's folder as the file names them, not as this machine resolved them.
        python, folder = processes.interpreter(), str(study.folder.resolve())
        words = ["python" if w == python else w.replace(folder, ".") for w in d.address.command]
        return f"`{' '.join(words)}` over stdio"

    def link(x: FollowUp) -> str:
        found = "value of the entry's" if x.key == "@" else f"`{x.key}`"
        return f"one {x.tool} call with every {found}" if x.batch else f"{x.tool} for each {found}"

    def path(d: StudyDesign) -> str:
        how = d.investigation
        if how.links:
            return ", then " + ", ".join(link(x) for x in how.links)
        return ", page by page" if how.cursor else ", one call"

    designs = "; ".join(
        f"**{name}** ({server(d)}: first {d.investigation.entry}{path(d)})" for name, d in study.designs.items()
    )
    match = matching.match(study.match).rule
    n, u = len(study.cases), len(study.unfriendly)
    return (
        f"Study **{study.title}** (`{study.path.name}`). The question: *{study.question}* Designs: {designs}. "
        f"{n} case{'s' if n != 1 else ''} and {u or 'no'} unfriendly input{'s' if u != 1 else ''}; the reference "
        f"is **{study.reference}**, and {match}.{ignored_clause(study)}"
        + (f" {study.description}" if study.description else "")
    )


def ignored_clause(study: Study) -> str:
    """The keys a study leaves out of matching and of the hostile pass's comparison, said where they apply."""
    said = [f"`{k}` (every design)" for k in study.ignore]
    for name, design in study.designs.items():
        said += [f"`{k}` ({name})" for k in design.ignore if k not in study.ignore]
    return f" Left out of matching wherever they occur: {', '.join(said)}." if said else ""


def framing_sentence(shares: list[dict[str, object]]) -> str:
    """The share of each rebuilt conversation's input that comes from the client's framing (modelled)."""
    return (
        "Framing alone accounts for "
        + " and ".join(
            f"**{r['share from framing %']:.1f}%** of the {r['design']} conversation's input" for r in shares
        )
        + " (modelled from tiktoken estimates)."
    )


def framing_record_sentence(rows: list[dict[str, Any]]) -> str:
    """What the framing chart shows, computed: how many times the bare text's tokens each profile's framing of the
    same results comes to, from the least to the most (tiktoken-estimated)."""
    from wismo.accounting.tokens import framing

    parts = []
    for name in framing.PROFILES:
        if name == framing.PYTHON.name:
            continue
        times = [r[name] / r[framing.PYTHON.name] for r in rows if r[framing.PYTHON.name]]
        if times:
            parts.append(f"{name} {min(times):.1f} to {max(times):.1f} times")
    return (
        "The same results framed by each client profile, against the bare text: " + "; ".join(parts) + ", over "
        f"{len(rows)} tool{'s' if len(rows) != 1 else ''} (tiktoken-estimated)."
    )


def prefix_sentence(result: dict[str, Any]) -> str:
    """What the cache prefix chart shows, computed: per design, the longest prefix a request could read and whether
    any request reads from the cache on the first model (modelled)."""
    first = result["prices"][0]
    calls = [c for c in result["caching"]["calls"] if c["model"] == first["model"] and c["strategy"] == "parallel"]
    parts = [f"{c['design']} reads {sum(c['read']):,} tokens (longest prefix {c['longestPrefix']:,})" for c in calls]
    return (
        f"On {first['model']} (cache threshold {first['cachePolicy']['threshold']:,} tokens): "
        + "; ".join(parts)
        + " (modelled, every prefix a hit)."
    )


def not_comparable_sentence(group: dict[str, Any]) -> str:
    """Why one group's runs are not compared, in one sentence: the runs and each property they differ in."""
    runs = list(dict.fromkeys(f"{r['design']} run {r['run']}" for d in group["differences"] for r in d["runs"]))
    differ = "; ".join(
        f"{d['property']} (" + " against ".join(f"{r['value']} for {r['design']}" for r in d["runs"]) + ")"
        for d in group["differences"]
    )
    return (
        f"**{group['label']}**: the {' and the '.join(runs)} are not comparable, since they differ in {differ}, so "
        "no saving or median change is computed across them; each design's medians are shown apart."
    )


def medians_sentence(group: dict[str, Any]) -> str:
    """One group of runs' medians, measure by measure: each design's model turns, and each other design's change in
    tokens and elapsed time against the reference, each measure with the kind of its figures; why they are not
    compared when the runs differ."""
    if not group.get("comparable", True):
        return not_comparable_sentence(group)
    ref, shown = group["study"]["reference"], group["designs"]
    others = [d for d in shown if d != ref]
    m = {r["measure"]: r for r in group["medians"]}
    kinds = group["kinds"]

    def changes(measure: str) -> str:
        fewer = "less" if measure in ("modelledElapsedMs", "wallMs") else "fewer"
        return ", ".join(f"{change(m[measure][f'{d} vs {ref} %'], fewer)} for {d}" for d in others)

    turns = ", ".join(f"{m['turns'][d]:g} for {d}" if m["turns"][d] is not None else f"none for {d}" for d in shown)
    if all(m["modelledElapsedMs"][d] is not None for d in others):
        elapsed = f"elapsed time {changes('modelledElapsedMs')} ({kinds['elapsed']})"
    elif kinds.get("runs", "").startswith("scripted"):  # no model ran: the wall time is the harness's own loop
        elapsed = (
            f"wall time of the harness's own loop {changes('wallMs')} (measured; without a latency model a scripted "
            "run has no model's elapsed time)"
        )
    else:
        elapsed = f"elapsed time {changes('wallMs')} (measured)"
    saved = "; ".join(f"{s['design']} {s['says']}" for s in group.get("saving", []))
    return (
        f"**{group['label']}**, medians per conversation: model turns {turns} ({kinds['turns']}); against the {ref} "
        f"design, {saved or 'no input tokens compared'} (median per case, {kinds['tokens']}) and {elapsed}."
    )


def pass_k_sentence(group: dict[str, Any]) -> str:
    """One group of runs' pass^k per design, and the summary claims flagged."""
    per = {
        d: [p for p in group["passK"] if p["design"] == d] for d in dict.fromkeys(p["design"] for p in group["passK"])
    }
    if not per:
        return (
            f"**{group['label']}**: not scored: the study gives no expected answer for any of these cases, so the "
            "five-field scorer does not apply (a case's `expect` table in the study file gives one)."
        )
    return (
        f"**{group['label']}**: pass^k, every repetition passed ({group['kinds']['scores']}): "
        + "; ".join(f"{d} {sum(p['pass^k'] for p in ps)}/{len(ps)} cases" for d, ps in per.items())
        + f"; summary claims flagged: {sum(len(r['summaryFlags']) for r in group['cases'])}."
    )


def published_sentence(result: dict[str, Any]) -> str:
    """Where a study's published conversations come from, in one Markdown sentence: the source, the model, and what
    its figures are (as its reference file says, where it names one)."""
    published = result.get("published")
    if published is None:
        return "The study publishes no conversation ([published] in its file), so nothing stands beside these runs."
    kind = published.get("reference", {}).get("kind") or (
        f"tokens {published['kind']}; turns, tool calls and elapsed times as the run that published them measured them"
    )
    return f"Source: *{published['source']}*, on {published['model']}; {kind}."


def transcript_headings(group: dict[str, Any]) -> dict[str, str]:
    """Per design, the Markdown line above its transcript: the group, the design and its final summary, given once
    (a later design whose summary is the same says so instead of repeating it)."""
    out: dict[str, str] = {}
    said: dict[str, str] = {}
    for design in group["transcripts"]:
        answer = group["answers"][design]
        same = next((d for d, a in said.items() if a == answer), None)
        summary = f"the same as the {same} design's" if same else f"*{answer}*"
        said[design] = answer
        out[design] = f"**{group['label']}, {design}** ({group['kinds']['runs']}): final summary: {summary}"
    return out


def written_to(folder: str) -> str:
    """Where this run's results went, for a notebook's last cell: the build's folder, or the folder of its own a run
    by hand gets (never another run's, never the build's)."""
    build = paths.in_build()
    if build is not None and Path(folder).resolve() == build.resolve():
        return "This build's results are the JSON files beside these pages, in the build's output folder."
    return (
        f"This run's results are in `{folder}`, a folder of this run's own: no other run's results and none of the "
        "build's in `outputs/` were changed."
    )
