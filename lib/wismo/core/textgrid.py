"""Numbers and plain-text grids as every text table shows them: counts with thousands separators, figures with
a fixed number of decimals, and columns aligned by padding (words to the left, numbers to the right)."""

from __future__ import annotations

from collections.abc import Sequence


def count(value: int) -> str:
    """A count with thousands separators."""
    return f"{value:,}"


def plural(value: int, noun: str, many: str | None = None) -> str:
    """A count and its noun, in the plural (`many`, else noun + 's') unless the count is one: '1 problem',
    '2 problems', '1,000 repetitions'."""
    return f"{value:,} {noun if value == 1 else many or noun + 's'}"


# Between the numbers of a list: a comma would read as a thousands separator ("549, 678, 1,032").
LIST_SEPARATOR = " · "


def either(words: Sequence[str]) -> str:
    """Choices in a sentence, each quoted: '"a", "b" or "c"'."""
    quoted = [f'"{w}"' for w in words]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def numbers(values: Sequence[int]) -> str:
    """Counts as a list a reader cannot misread: each with thousands separators, joined by a middle dot."""
    return LIST_SEPARATOR.join(count(v) for v in values)


def figure(value: float, decimals: int = 1) -> str:
    """A measured or computed figure: whole thousands without decimals, fractions below one with three significant
    digits (a price of $0.15 per million keeps them), anything else with `decimals` and thousands separators."""
    if value.is_integer() and abs(value) >= 1000:
        return f"{value:,.0f}"
    if 0 < abs(value) < 1:
        return f"{value:.3g}"
    return f"{value:,.{decimals}f}"


def grid(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    left: tuple[int, ...] = (0,),
    minimum: Sequence[int] = (),
    indent: str = "",
    trim: bool = True,
) -> list[str]:
    """Rows under a header, two spaces between columns: the columns numbered in `left` (words) left-aligned, the
    rest (numbers) right-aligned, each as wide as its widest cell or its `minimum`; `trim` drops trailing spaces."""
    lines = [header, *rows]
    widths = [max([len(r[i]) for r in lines] + list(minimum[i : i + 1])) for i in range(len(header))]
    out = []
    for r in lines:
        line = indent + "  ".join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
        out.append(line.rstrip() if trim else line)
    return out
