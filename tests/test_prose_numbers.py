"""Prose and code agree: every number quoted in a chapter's prose is printed by one of its cells.

For each notebook, every decimal number (like 0.8219 or 9646.6) and every integer of three or
more digits in a markdown cell must appear verbatim in the text of some output of the same
notebook or in its code. Numbers that are not computed (years, section numbers of a paper, issue
numbers) are listed per notebook in its metadata under ``prose_numbers_allow``. Pages in ``book/``
may quote a number only if some notebook prints it, unless their front matter allows it.

A changed digit in a stored output therefore fails this test as well as nbval.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
PAGES = sorted((ROOT / "book").glob("*.md"))

# a decimal number (0.8219, -0.41614684, 1e-12 is handled as "1e-12"), or an integer >= 100
NUMBER = re.compile(r"(?<![\w.,])-?(?:\d+\.\d+(?:e[-+]?\d+)?|\d+e[-+]?\d+|\d{1,3}(?:,\d{3})+|\d{3,})(?![\w]|,\d)")
# Not prose: code spans, links' targets, cross-reference labels, cite keys, math is kept (it is prose).
STRIP = [
    re.compile(p, re.S)
    for p in (r"```.*?```", r"\{[a-z:]+\}`[^`]*`", r"`[^`]*`", r"\]\([^)]*\)", r"\(([\w-]+)\)=")
]


def prose_numbers(text: str) -> set[str]:
    for pattern in STRIP:
        text = pattern.sub(" ", text)
    return {m.group(0).lstrip("-").replace(",", "") for m in NUMBER.finditer(text)}


def output_text(nb) -> str:
    parts = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        parts.append(cell.source)
        for out in cell.get("outputs", []):
            if "text" in out:
                parts.append(out["text"])
            for mime, value in out.get("data", {}).items():
                if isinstance(value, str) and not mime.startswith("image/"):
                    parts.append(value)
    return "\n".join(parts).replace(",", "")


def _missing(numbers: set[str], haystack: str, allowed: set[str]) -> list[str]:
    return sorted(n for n in numbers - allowed if not re.search(rf"(?<![\d]){re.escape(n)}", haystack))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_number_in_prose_is_printed(path):
    nb = nbformat.read(path, as_version=4)
    allowed = set(nb.metadata.get("prose_numbers_allow", []))
    quoted = set().union(*(prose_numbers(c.source) for c in nb.cells if c.cell_type == "markdown"))
    missing = _missing(quoted, output_text(nb), allowed)
    assert not missing, (
        f"{path.name}: these numbers appear in the prose but in no output or code cell: {missing}. "
        "Print them in a cell, or (for years, section or issue numbers) add them to the notebook's "
        "metadata list 'prose_numbers_allow'."
    )


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_book_pages_quote_only_computed_numbers(path):
    text = path.read_text()
    allowed: set[str] = set()
    front = re.match(r"---\n(.*?)\n---\n", text, re.S)
    if front:
        m = re.search(r"prose_numbers_allow:\s*\[(.*?)\]", front.group(1))
        if m:
            allowed = {s.strip().strip("'\"") for s in m.group(1).split(",") if s.strip()}
        text = text[front.end():]
    text = re.sub(r"```\{bibliography\}.*?```", " ", text, flags=re.S)
    everything = "\n".join(output_text(nbformat.read(p, as_version=4)) for p in NOTEBOOKS)
    missing = _missing(prose_numbers(text), everything, allowed)
    assert not missing, f"{path.name}: numbers quoted but printed by no notebook: {missing}"


def test_the_check_can_fail():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("The value is 0.8219 and 9646.6."),
                nbformat.v4.new_code_cell("print(x)", outputs=[nbformat.v4.new_output("stream", text="0.8219\n")])]
    assert _missing(set().union(prose_numbers(nb.cells[0].source)), output_text(nb), set()) == ["9646.6"]
    # thousands separators are read as one number, and match the same number printed without them
    assert prose_numbers("at 1,146,053 and 1146054 and 2.5") == {"1146053", "1146054", "2.5"}
