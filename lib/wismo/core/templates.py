"""Templates and dotted paths, the two small languages of a study file: "{field}" filled from a case, and
"a.b.c" read from a tool's result (a list on the way is read element by element)."""

from __future__ import annotations

import re
from typing import Any

FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def fields_named(template: Any) -> set[str]:
    """Every {field} a template names, in strings at any depth of lists and tables."""
    if isinstance(template, str):
        return set(FIELD.findall(template))
    if isinstance(template, dict):
        return set().union(*(fields_named(v) for v in template.values())) if template else set()
    if isinstance(template, list):
        return set().union(*(fields_named(v) for v in template)) if template else set()
    return set()


def fill(template: Any, values: dict[str, Any]) -> Any:
    """The template with each {field} replaced by the case's value: a string that is exactly "{field}" becomes the
    value as it is (any JSON value); inside a longer string the value is written as text; tables and lists are
    filled element by element. A field the values lack raises KeyError naming it."""
    if isinstance(template, str):
        whole = FIELD.fullmatch(template)
        if whole:
            return values[whole.group(1)]
        return FIELD.sub(lambda m: as_text(values[m.group(1)]), template)
    if isinstance(template, dict):
        return {k: fill(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [fill(v, values) for v in template]
    return template


def as_text(value: Any) -> str:
    """A value as it stands inside a sentence: strings as they are, anything else as JSON."""
    if isinstance(value, str):
        return value
    import json

    return json.dumps(value, ensure_ascii=False)


def read(record: Any, path: str) -> Any:
    """The value at a dotted path: None where a step is absent; a list met on the way is read element by element,
    and the values found are flattened into one list (so "relations.to" is every relation's `to`)."""
    value = record
    for step in path.split("."):
        if isinstance(value, list):
            found = [read(item, step) for item in value]
            value = [x for item in found for x in (item if isinstance(item, list) else [item]) if x is not None]
        elif isinstance(value, dict):
            value = value.get(step)
        else:
            return None
    return value
