"""The readable forms of a `wismo tokens` measurement: the table by cost, the budget verdict, the change from a
saved baseline, and the one-line-per-server table of several measurements."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypedDict, cast

from wismo.core.errors import InputError
from wismo.core.textgrid import count, grid

if TYPE_CHECKING:
    from wismo.studies.audit.measure import Figures, Measurement, ToolFigures, Unframed

BUDGET_MEASURE: Final = "harmony"  # the budget and the baseline hold the complete count of the definitions
HEAVIEST = 3  # tools named when the budget is exceeded


class ToolChange(TypedDict):
    """One tool added, removed, grown or shrunk since a baseline (harmony totals)."""

    tool: str
    change: str
    before: int | None
    after: int | None
    delta: int


class Changes(TypedDict):
    """What changed since a baseline: each tool that changed, and the whole definitions' totals (changes())."""

    measure: str
    tools: list[ToolChange]
    unchanged: int
    before: int
    after: int
    delta: int
    sameMethod: bool


def by_cost(measurement: Measurement) -> list[ToolFigures]:
    """The tools, heaviest first (harmony total), ties by name."""
    return sorted(measurement["tools"], key=lambda t: (-t[BUDGET_MEASURE]["total"], t["name"]))


def _definitions(m: Measurement) -> list[str]:
    """The tool definitions, heaviest first, each with its parts and its share of the whole."""
    d = m["definitions"]
    header = ["tool", "tokens", "share", "name", "description", "parameters", "cookbook", "JSON", "harmony leaves out"]
    rows = [
        [
            t["name"],
            count(t["harmony"]["total"]),
            f"{t['sharePercent']:.1f}%",
            count(t["harmony"]["name"]),
            count(t["harmony"]["description"]),
            count(t["harmony"]["parameters"]),
            count(t["cookbook"]["total"]),
            count(t["json"]["total"]),
            ", ".join(t["harmonyLeavesOut"]),
        ]
        for t in by_cost(m)
    ]
    if m["tools"]:
        rows.append(
            [
                "(namespace frame)",
                count(d["harmony"]["frame"]),
                f"{d['harmonyFrameSharePercent']:.1f}%",
                "",
                "",
                "",
                count(d["cookbook"]["frame"]),
                "",
                "",
            ]
        )
    rows.append(
        [
            "total",
            count(d["harmony"]["total"]),
            "100.0%" if m["tools"] else "",
            "",
            "",
            "",
            count(d["cookbook"]["total"]),
            count(d["json"]["total"]),
            "",
        ]
    )
    lines = grid(header, rows, left=(0, 8))
    lines[-1:-1] = ["-" * len(lines[0])]
    return lines


def _listed(m: Measurement) -> list[str]:
    """Instructions, prompts and resources, one line each."""
    i = m["instructions"]
    lines = [
        f"instructions: {count(i['tokens'])} tokens, {count(i['bytes'])} bytes"
        if i["present"]
        else "instructions: none"
    ]
    for kind in ("prompts", "resources"):
        e = m[kind]
        if not e["declared"]:
            lines.append(f"{kind}: not declared by the server")
            continue
        each = ", ".join(f"{r['name']} {count(r['tokens'])}" for r in e["entries"])
        lines.append(f"{kind}: {len(e['entries'])} listed, {count(e['total'])} tokens" + (f" ({each})" if each else ""))
    return lines


def _calls(m: Measurement) -> list[str]:
    """Each sampled result: tokens and bytes bare and under every client profile."""
    results = m["calls"]["results"]
    if not results:
        return []
    profiles = list(results[0]["profiles"])
    header = ["call", "error", "bare", *profiles]

    def cell(figures: Figures | Unframed) -> str:
        return "cannot frame" if "error" in figures else f"{count(figures['tokens'])} / {count(figures['bytes'])} B"

    rows = [
        [
            f"{r['tool']} {json.dumps(r['arguments'], separators=(',', ':'))}"[:60],
            "yes" if r["isError"] else "",
            cell(r["bare"]),
            *(cell(r["profiles"][p]) for p in profiles),
        ]
        for r in results
    ]
    notes = [
        f"  {r['tool']} under {p}: {figures['error']}"
        for r in results
        for p in profiles
        for figures in [r["profiles"][p]]
        if "error" in figures
    ]
    return [
        "",
        "sampled results (tokens / UTF-8 bytes):",
        *grid(header, rows, left=(0, 1)),
        *notes,
        f"bare: {m['calls']['bareMethod']}; profiles: {m['calls']['framedMethod']}.",
    ]


def table(m: Measurement) -> str:
    """The whole measurement as text: definitions by cost, what else the server lists, sampled results, methods."""
    s, t = m["server"], m["target"]
    where = t.get("url") or " ".join(t["command"])
    d = m["definitions"]
    lines = [
        f"{s['name']} {s['version']} over {t['transport']} ({where}), protocol {s['protocolVersion']}: "
        f"{len(m['tools'])} tool{'' if len(m['tools']) == 1 else 's'}",
        "",
        *_definitions(m),
        "",
        f"tokens: {d['harmony']['method']}, {d['harmony']['encoding']}; name, description and parameters are "
        f"each counted alone, so they need not add up to the tool's total.",
        f"cookbook: {d['cookbook']['method']} (top-level properties only), {d['cookbook']['encoding']}.",
        f"JSON: {d['json']['method']}, {d['json']['encoding']}. All {d['harmony']['label']}.",
        "",
        *_listed(m),
        f"(instructions: {m['instructions']['method']}; prompts and resources: "
        f"{m['prompts'].get('method') or m['resources'].get('method') or 'not listed'}.)",
        *_calls(m),
    ]
    return "\n".join(lines)


def over_budget(m: Measurement, max_tokens: int) -> str | None:
    """A sentence when the definitions exceed `max_tokens`, naming the heaviest tools; None within budget."""
    whole = m["definitions"][BUDGET_MEASURE]
    if whole["total"] <= max_tokens:
        return None
    heaviest = ", ".join(f"{t['name']} ({count(t[BUDGET_MEASURE]['total'])})" for t in by_cost(m)[:HEAVIEST])
    return (
        f"the tool definitions take {count(whole['total'])} tokens ({BUDGET_MEASURE}, {whole['encoding']}), "
        f"{count(whole['total'] - max_tokens)} over the budget of {count(max_tokens)}; heaviest: {heaviest}"
    )


def load_baseline(path: str | Path) -> Measurement:
    """A saved `wismo tokens --json` output; a ValueError in one sentence when it is missing or not one."""
    try:
        saved = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read the baseline {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise InputError(f"the baseline {path} is not JSON ({exc})") from None
    try:
        for tool in saved["tools"]:
            int(tool[BUDGET_MEASURE]["total"]), str(tool["name"])
        int(saved["definitions"][BUDGET_MEASURE]["total"])
    except (KeyError, TypeError, ValueError):
        raise InputError(f"the baseline {path} is not the output of `wismo tokens --json`") from None
    return cast("Measurement", saved)


def changes(before: Measurement, after: Measurement) -> Changes:
    """Each tool added, removed, grown or shrunk since `before` (harmony totals), and the whole's change."""
    old = {t["name"]: t[BUDGET_MEASURE]["total"] for t in before["tools"]}
    new = {t["name"]: t[BUDGET_MEASURE]["total"] for t in after["tools"]}
    rows: list[ToolChange] = []
    for name in sorted(old.keys() | new.keys()):
        was, now = old.get(name), new.get(name)
        if was == now:
            continue
        kind = "added" if was is None else "removed" if now is None else "grown" if now > was else "shrunk"
        rows.append({"tool": name, "change": kind, "before": was, "after": now, "delta": (now or 0) - (was or 0)})
    whole = [before["definitions"][BUDGET_MEASURE], after["definitions"][BUDGET_MEASURE]]
    return {
        "measure": BUDGET_MEASURE,
        "tools": rows,
        "unchanged": sum(1 for n in old.keys() & new.keys() if old[n] == new[n]),
        "before": whole[0]["total"],
        "after": whole[1]["total"],
        "delta": whole[1]["total"] - whole[0]["total"],
        "sameMethod": whole[0]["method"] == whole[1]["method"] and whole[0]["encoding"] == whole[1]["encoding"],
    }


def changes_text(diff: Changes, baseline: str) -> str:
    """The change from a baseline, one line per tool, in the manner of a diff."""
    sign = {"added": "+", "removed": "-", "grown": "~", "shrunk": "~"}
    lines = [
        f"--- {baseline} (baseline)",
        "+++ now",
        f"definitions: {count(diff['before'])} -> {count(diff['after'])} tokens ({diff['delta']:+,}); "
        f"{len(diff['tools'])} tool{'' if len(diff['tools']) == 1 else 's'} changed, {diff['unchanged']} unchanged",
    ]
    for r in diff["tools"]:
        was = "" if r["before"] is None else count(r["before"])
        now = "" if r["after"] is None else count(r["after"])
        lines.append(
            f"{sign[r['change']]} {r['tool']}: {r['change']} {was}{' -> ' if was and now else ''}{now} "
            f"({r['delta']:+,})"
        )
    if not diff["sameMethod"]:
        lines.append("note: the baseline was counted with another method or encoding; the numbers are not comparable")
    return "\n".join(lines)


def peers_table(measured: Mapping[str, Measurement]) -> str:
    """One line per server: its definitions three ways, its heaviest tool, instructions, prompts and resources."""
    header = ["server", "tools", "harmony", "cookbook", "JSON", "heaviest tool", "instructions", "prompts", "resources"]
    rows = []
    for label, m in measured.items():
        d, heavy = m["definitions"], by_cost(m)[:1]
        rows.append(
            [
                label,
                count(len(m["tools"])),
                count(d["harmony"]["total"]),
                count(d["cookbook"]["total"]),
                count(d["json"]["total"]),
                f"{heavy[0]['name']} {count(heavy[0]['harmony']['total'])}" if heavy else "",
                count(m["instructions"]["tokens"]) if m["instructions"]["present"] else "none",
                count(m["prompts"]["total"]) if m["prompts"]["declared"] else "not declared",
                count(m["resources"]["total"]) if m["resources"]["declared"] else "not declared",
            ]
        )
    return "\n".join(grid(header, rows, left=(0, 5)))
