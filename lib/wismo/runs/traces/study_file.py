"""The study that checks the fix, written from the top chain with inferred links: the traced design as entry and links
(from the paths where the arguments' values appeared), a focused design left as a placeholder for the team's new
tool, and cases from the traced inputs."""

from __future__ import annotations

import json
import re
from typing import Any

PLACEHOLDER_COMMAND = "<the command that starts the server with your focused tool>"
PLACEHOLDER_TOOL = "<your focused tool>"
TRACED_COMMAND = "<the command that starts the traced server>"


def _value(value: object) -> str:
    """A TOML value (strings as basic strings, which JSON's escapes are; lists and tables inline)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML for {type(value).__name__}")


def _key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() else json.dumps(key)


def records(tool: str, many: bool) -> str:
    """Where a step's records go in the evidence, named for them: the tool's name less its verb, in the plural when
    the step follows a list (get_payment -> payment, get_reservation over reservationIds[] -> reservations)."""
    name = re.sub(r"^(get|fetch|list|read|load|find|lookup|query)_", "", tool) or tool
    return name + "s" if many and not name.endswith("s") else name


def text(
    chain: dict[str, Any], command: list[str] | None, files: list[str], cases: list[dict[str, object]] | None = None
) -> str:
    """The study file (TOML) for a chain summary with links; `command` starts the traced server when it is known
    (a design wismo serves), else the traced design's command is a placeholder too; `cases` are every traced case
    of the entry (the chain's own when not given). Each step keeps its records under a name of their own, and the
    match is by text, so a focused tool that returns the same records in another shape agrees."""
    entry = chain["tools"][0]
    cases = cases if cases is not None else chain["cases"]
    key = next(iter(cases[0])) if cases else "id"
    arguments = {name: "{" + name + "}" for name in (cases[0] if cases else {key: None})}
    followed = [link for link in chain["links"] if link["from"] == entry and link["path"]]
    unfollowed = [link for link in chain["links"] if link not in followed]
    lines = [
        "# Written by `wismo traces` from the chain most conversations showed with inferred links:",
        f"#   {' -> '.join(chain['tools'])} ({chain['conversations']} of the conversations read)",
        f"# from {', '.join(files)}.",
        "# Point the focused design at your new tool, then: wismo study check FILE, and wismo study run FILE",
        "# shows whether it returns the same evidence as the traced design, case by case.",
        "",
        f"title = {_value('The traced chain ' + ' -> '.join(chain['tools']) + ' against one focused call')}",
        f"question = {_value('What do we know about {' + key + '}?')}",
        'reference = "traced"',
        "# By text: every value the traced design gathers must occur in the focused tool's answer, whatever its shape.",
        'match = "text"',
        f"key = {_value(key)}",
        "",
        "[designs.traced]",
        f"command = {_value(command or [TRACED_COMMAND])}",
        f"entry = {_value({'tool': entry, 'arguments': arguments, 'into': records(entry, False)})}",
    ]
    if followed:
        lines.append("links = [")
        for link in followed:
            step = {"from": link["path"], "tool": link["tool"], "argument": link["argument"]}
            lines.append(f"  {_value(step | {'into': records(link['tool'], link['path'].endswith('[]'))})},")
        lines.append("]")
    for link in unfollowed:
        lines.append(
            f"# not declarable as a link of the entry: {link['tool']}.{link['argument']} from "
            f"{link['from']}'s result at {link['path'] or 'its text'}"
        )
    lines += [
        "",
        "[designs.focused]",
        f"command = {_value([PLACEHOLDER_COMMAND])}",
        f"entry = {_value({'tool': PLACEHOLDER_TOOL, 'arguments': arguments})}",
    ]
    unwritten = 0
    for case in cases:
        label = "as traced: " + ", ".join(f"{k} {v}" for k, v in case.items())
        try:
            values = [f"{_key(k)} = {_value(v)}" for k, v in case.items()]
        except (TypeError, RecursionError):  # a null inside, or nested deeper than it can be written
            unwritten += 1
            continue
        lines += ["", "[[cases]]", f"label = {_value(label)}", *values]
    if unwritten:
        left = f"{unwritten} traced case{'s' if unwritten > 1 else ''} left out"
        lines += ["", f"# {left}: arguments that hold a null (TOML has none) or nest too deeply to write"]
    return "\n".join(lines) + "\n"
