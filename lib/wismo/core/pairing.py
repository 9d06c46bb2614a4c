"""Whether each record of one value is kept together in another: what match = "text" asks beyond finding every text,
so that two records' fields exchanged between them are a difference and not a pass."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from functools import lru_cache

from wismo.core.jsondiff import text_leaves, text_missing

NOT_TOGETHER = "<not with its record>"
_MASK = "\x00"


def records(value: object, path: str = "") -> list[tuple[str, dict[str, object]]]:
    """The innermost objects of a JSON value (objects with no object inside them) with their paths, in order."""
    if isinstance(value, dict):
        inner = [r for k, v in value.items() for r in records(v, f"{path}.{k}" if path else k)]
        return inner or [(path or "<root>", value)]
    if isinstance(value, list):
        return [r for i, x in enumerate(value) for r in records(x, f"{path}[{i}]")]
    return []


def kind(path: str) -> str:
    """A record's kind: its path with the list indices left out (loans[0] and loans[1] are records of one kind)."""
    return re.sub(r"\[\d+\]", "[]", path)


@lru_cache(maxsize=4096)
def _alone(text: str) -> re.Pattern[str]:
    """`text` where it stands as a whole token: a letter or digit at its edge is not joined to another, nor to a hyphen
    or a decimal point (the 1 of M-1, 1.5 or 2026-12-01 is no 1)."""
    before = r"(?<![\w-])(?<!\d\.)" if text[:1].isalnum() else ""
    after = r"(?![\w-])(?!\.\d)" if text[-1:].isalnum() else ""
    return re.compile(before + re.escape(text) + after)


def _clean(text: str, own: list[str], foreign: set[str]) -> bool:
    """Whether `text` holds none of `foreign` as a whole token, once the record's `own` texts are masked out (so a
    sibling's "2" is not found inside this record's "2026-12-09")."""
    for t in sorted(own, key=len, reverse=True):
        text = _alone(t).sub(lambda m: _MASK * len(m.group()), text)
    return not any(_alone(f).search(text) for f in foreign)


def _objects(value: object) -> list[list[str]]:
    """Every object of a JSON value, at any depth, as the texts of its leaves."""
    found: list[list[str]] = []
    if isinstance(value, dict):
        found.append([t for _, t in text_leaves(value)])
        for v in value.values():
            found += _objects(v)
    elif isinstance(value, list):
        for x in value:
            found += _objects(x)
    return found


def _holds(texts: list[str], values: list[str]) -> bool:
    """Whether every one of `values` occurs within one of `texts` (as match = "text" finds a text)."""
    return all(any(v in x for x in texts) for v in values)


def _holds_whole(texts: list[str], values: list[str]) -> bool:
    """Whether every one of `values` stands in one of `texts` as a whole token (L-1 is not in L-11, 1 not in 11)."""
    return all(any(v in x and _alone(v).search(x) for x in texts) for v in values)


def _in_string(own: list[str], foreign: set[str], text: str) -> bool:
    """Whether one span of `text` holds every one of `own` and none of `foreign`: the span starts from each
    occurrence of the rarest of them and reaches the nearest occurrence of each of the others."""
    spots = {}
    for t in own:
        found = [m.span() for m in _alone(t).finditer(text)] or [
            (m.start(), m.start() + len(t)) for m in re.finditer(re.escape(t), text)
        ]
        if not found:
            return False
        spots[t] = found
    starts = {t: [span[0] for span in spans] for t, spans in spots.items()}
    rarest = min(own, key=lambda t: len(spots[t]))
    for start, end in spots[rarest]:
        lo, hi = start, end
        for t in own:
            s, e = spots[t][_nearest(starts[t], start)]
            lo, hi = min(lo, s), max(hi, e)
        if _clean(text[lo:hi], own, foreign):
            return True
    return False


def _nearest(starts: list[int], at: int) -> int:
    """The index of the start nearest `at` in a sorted list of starts."""
    k = bisect.bisect_left(starts, at)
    if k == len(starts) or (k > 0 and at - starts[k - 1] <= starts[k] - at):
        return k - 1
    return k


@dataclass
class Places:
    """Where a value keeps its records: each of its objects (at any depth) as its leaves' texts, and its strings;
    which of them hold which sibling record whole is worked out once per record and kept."""

    objects: list[list[str]]
    strings: list[str]
    _whole: dict[tuple[str, ...], list[int]] = field(default_factory=dict)

    @classmethod
    def of(cls, value: object) -> Places:
        """The places of one JSON value."""
        return cls(_objects(value), [t for _, t in text_leaves(value)])

    def _texts(self, place: int) -> list[str]:
        """A place's texts: an object's leaves (places 0..), then each string on its own."""
        n = len(self.objects)
        return self.objects[place] if place < n else [self.strings[place - n]]

    def holding(self, record: list[str]) -> list[int]:
        """The places that hold a record whole, each of its texts as a whole token."""
        key = tuple(record)
        if key not in self._whole:
            places = range(len(self.objects) + len(self.strings))
            self._whole[key] = [p for p in places if _holds_whole(self._texts(p), record)]
        return self._whole[key]

    def together(self, own: list[str], siblings: list[list[str]]) -> bool:
        """Whether the texts `own` of one record are kept together: all within one object that holds no sibling
        record whole, or within one string; a string that also holds a sibling whole, one held nowhere else, must
        hold `own` within one span that has none of its other texts (lines of "L-11 ... due 2026-12-09" hold each
        loan, a swapped due date does not). A sibling whose texts are all among ours tells nothing apart."""
        if len(set(own)) < 2:
            return True
        apart = [s for s in siblings if not set(s) <= set(own)]
        held = {p for s in apart for p in self.holding(s)}
        for p, texts in enumerate(self.objects):
            if p not in held and _holds(texts, own):
                return True
        n = len(self.objects)
        for k, text in enumerate(self.strings):
            if not _holds([text], own):
                continue
            inside = [s for s in apart if n + k in self.holding(s) and not self._elsewhere(s, own, n + k)]
            if not inside or _in_string(own, {t for s in inside for t in s} - set(own), text):
                return True
        return False

    def _elsewhere(self, sibling: list[str], own: list[str], here: int) -> bool:
        """Whether a sibling record is held whole by a place of its own, one that does not hold `own`: then its texts
        in a string with ours are context (a diff's unchanged lines), not the sibling itself."""
        return any(p != here and not _holds(self._texts(p), own) for p in self.holding(sibling))

    def apart(self, leaves: list[tuple[str, str]], siblings: list[list[str]]) -> tuple[str, str]:
        """The first of a record's values found apart from its first one: missing from the smallest object that
        holds the first, else not kept together with it."""
        anchor = leaves[0][1]
        holding = [texts for texts in self.objects if _holds(texts, [anchor])]
        if holding:
            missing = [(p, t) for p, t in leaves[1:] if not _holds(min(holding, key=len), [t])]
            if missing:
                return missing[0]
        return next(((p, t) for p, t in leaves[1:] if not self.together([anchor, t], siblings)), leaves[-1])


def unpaired(a: object, b: object, names: tuple[str, str] = ("a", "b")) -> list[dict[str, object]]:
    """The first record of `a` that `b` does not keep together (see `Places.together`), as one {path, names[0]:
    value, names[1]: NOT_TOGETHER, record: the record's path}, naming the first of its values found apart from its
    first one; empty when every record is kept together. Only records with a sibling of their kind are looked at: a
    record alone of its kind cannot be taken for another."""
    found = records(a)
    kinds: dict[str, list[str]] = {}
    for path, _ in found:
        kinds.setdefault(kind(path), []).append(path)
    texts = {path: text_leaves(record, path) for path, record in found}
    places = Places.of(b)
    for path, _ in found:
        siblings = [[t for _, t in texts[p]] for p in kinds[kind(path)] if p != path]
        if not siblings:
            continue
        own = [t for _, t in texts[path]]
        if places.together(own, siblings):
            continue
        apart = places.apart(texts[path], siblings)
        return [{"path": apart[0], names[0]: apart[1], names[1]: NOT_TOGETHER, "record": path}]
    return []


def text_held(a: object, b: object, names: tuple[str, str] = ("a", "b")) -> list[dict[str, object]]:
    """The study file's match = "text": the first text of `a` that occurs in no text of `b`, else the first record of
    `a` that `b` does not hold together; empty when b holds every text of a, each with its record."""
    return text_missing(a, b, names) or unpaired(a, b, names)
