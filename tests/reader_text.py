"""What a reader's page says, as text: its narrative (outside code), sentences per section, and its tables."""

from __future__ import annotations

import difflib
import re

from bs4 import BeautifulSoup


def page(html: str) -> BeautifulSoup:
    """The reader's page, without code, styles, scripts or images' data."""
    soup = BeautifulSoup(html, "html.parser")
    for el in soup.find_all(["pre", "code", "style", "script"]):
        el.decompose()
    return soup


def narrative(soup: BeautifulSoup) -> str:
    """Every word a reader reads outside code and tables."""
    return " ".join(
        el.get_text(" ", strip=True)
        for el in soup.find_all(["h1", "h2", "h3", "p", "li"])
        if not el.find_parent("table")
    )


def sections(soup: BeautifulSoup) -> dict[str, list[str]]:
    """The sentences of each section (a section starts at an h2), outside tables."""
    out: dict[str, list[str]] = {"": []}
    current = ""
    for el in soup.find_all(["h2", "p", "li"]):
        if el.find_parent("table"):
            continue
        if el.name == "h2":
            current = el.get_text(" ", strip=True)
            out[current] = []
            continue
        text = re.sub(r"\s+", " ", el.get_text(" ", strip=True))
        out[current] += [s for s in re.split(r"(?<=[.!?])\s+", text) if len(s.split()) >= 8]
    return out


def near_duplicates(sentences: list[str], ratio: float = 0.8) -> list[tuple[str, str]]:
    """Pairs of sentences that say nearly the same thing."""
    return [
        (a, b)
        for i, a in enumerate(sentences)
        for b in sentences[i + 1 :]
        if difflib.SequenceMatcher(None, a.lower(), b.lower()).ratio() >= ratio
    ]


def tables(soup: BeautifulSoup) -> list[tuple[list[str], list[list[str]]]]:
    """Every table: its header cells and its rows of cells, as text."""
    out = []
    for table in soup.find_all("table"):
        heads = [th.get_text(" ", strip=True) for th in table.find_all("th")]
        rows = [[td.get_text(" ", strip=True) for td in tr.find_all("td")] for tr in table.find_all("tr")]
        out.append((heads, [r for r in rows if r]))
    return out
