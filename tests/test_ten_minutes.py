"""book/ten_minutes.md, "The book in ten minutes": each number is printed by the chapter its paragraph links.

tests/test_prose_numbers.py lets a book page quote any number that *some* notebook prints. That is too
loose for a page of results, where "0.9367 of the sums" is backed by chapter 9 as easily as by chapter 2,
the chapter the paragraph cites. Here the page is cut into blocks (paragraphs, list items, headings),
and every number the prose-number rule checks (tests/prose_numbers.py: same tokenizer, same rounding
rule) must be printed by an output of the one chapter that its block links with {doc}`../notebooks/NN_x`.
A block that quotes a number must link exactly one chapter. The page's front matter may allow a number
that is not computed (``prose_numbers`` entries, as on every book page).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
import yaml
from prose_numbers import Printed, check_entries, output_texts, printed, quoted_numbers, sentence
from test_prose_numbers import page_parts

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "book" / "ten_minutes.md"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

# {doc}`text <target>` or {doc}`target`; a chapter is a target ../notebooks/NN_name (the page is in book/)
DOC_LINK = re.compile(r"\{doc\}`(?:[^`<]*<\s*(?P<t1>[^`<>]+?)\s*>|\s*(?P<t2>[^`<>]+?)\s*)`", re.S)
CHAPTER_TARGET = re.compile(r"^\.\./notebooks/(?P<stem>[\w-]+?)(?:\.ipynb)?$")
BLOCK_START = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+|^#{1,6}[ \t]")  # a list item or a heading


def blocks(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the blocks of ``text``: runs of lines split at blank lines, list items
    and headings (a heading is a block of its own)."""
    spans: list[tuple[int, int]] = []
    start = None
    pos = 0
    for line in text.splitlines(keepends=True):
        blank = not line.strip()
        if start is not None and (blank or BLOCK_START.match(line)):
            spans.append((start, pos))
            start = None
        if start is None and not blank:
            start = pos
        pos += len(line)
        if start is not None and line.lstrip().startswith("#"):  # a heading ends where its line ends
            spans.append((start, pos))
            start = None
    if start is not None:
        spans.append((start, pos))
    return spans


def linked_chapters(block: str) -> list[str]:
    """The notebook stems a block links with {doc}, in order (other {doc} links are ignored)."""
    stems = []
    for m in DOC_LINK.finditer(block):
        c = CHAPTER_TARGET.match(m.group("t1") or m.group("t2"))
        if c:
            stems.append(c.group("stem"))
    return stems


def page_problems(text: str, chapters: dict[str, Printed]) -> list[str]:
    """Every number of the page (markdown with front matter) not printed by the chapter its block links."""
    meta, body = page_parts(text)
    allowed, problems = check_entries(meta.get("prose_numbers"))
    free = [a for a in allowed if a is not None]
    spans = blocks(body)
    for q in quoted_numbers(body):
        start, end = next(s for s in spans if s[0] <= q.start < s[1])
        stems = linked_chapters(body[start:end])
        where = f"{q.written!r} in: {sentence(body, q.start, q.end)}"
        if len(stems) == 1 and stems[0] in chapters and chapters[stems[0]].backs(q):
            continue
        hit = next((a for a in free if a.value == q.value and a.percent == q.percent), None)
        if hit is not None:
            free.remove(hit)
            continue
        if not stems:
            problems.append(f"no chapter linked in the paragraph of {where}")
        elif len(stems) > 1:
            problems.append(f"{len(stems)} chapters linked ({', '.join(stems)}), so none backs {where}")
        elif stems[0] not in chapters:
            problems.append(f"the linked chapter {stems[0]!r} does not exist: {where}")
        else:
            problems.append(f"not printed by {stems[0]}: {where}")
    problems += [f"front matter entry for {a.written!r} allows nothing; remove it" for a in free]
    return problems


@pytest.fixture(scope="module")
def chapters() -> dict[str, Printed]:
    return {p.stem: printed(output_texts(nbformat.read(p, as_version=4))) for p in NOTEBOOKS}


def fail_message(problems):
    return (
        f"book/ten_minutes.md: {len(problems)} problem(s)\n  "
        + "\n  ".join(problems)
        + "\nQuote a number only as the linked chapter prints it (rounded as tests/prose_numbers.py allows), "
        "in a paragraph that links that one chapter."
    )


def test_every_number_is_printed_by_the_chapter_its_paragraph_links(chapters):
    problems = page_problems(PAGE.read_text(encoding="utf-8"), chapters)
    assert not problems, fail_message(problems)


def test_every_chapter_is_summarised():
    linked = set(linked_chapters(PAGE.read_text(encoding="utf-8")))
    missing = [p.stem for p in NOTEBOOKS if p.stem not in linked]
    assert not missing, f"book/ten_minutes.md links no paragraph to: {missing}; add each chapter's key result"


def test_the_page_comes_right_after_the_introduction():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    assert toc["root"] == "book/intro"
    first = toc["parts"][0]
    assert [c["file"] for c in first["chapters"]] == ["book/ten_minutes"] and not first.get("numbered")
    assert "<ten_minutes>`" in (ROOT / "book" / "intro.md").read_text(encoding="utf-8")


# ---- the check itself, on the real page and on small pages ----------------------------------------
def test_a_planted_wrong_digit_fails(chapters):
    text = PAGE.read_text(encoding="utf-8")
    for right, wrong in [("0.9367", "0.9368"), ("1146053", "1146054"), ("63.4%", "63.5%")]:
        assert text.count(right) == 1, f"the page no longer quotes {right}: pick another number to plant"
        problems = page_problems(text.replace(right, wrong), chapters)
        assert len(problems) == 1 and problems[0].startswith("not printed by ") and repr(wrong) in problems[0]


def test_a_number_backed_only_by_another_chapter_fails(chapters):
    # 0.9367 (chapter 2) and 8.74e-10 (chapter 9) are printed somewhere, so the looser book-page rule passes;
    # swapping the two chapters' links must fail both paragraphs
    text = PAGE.read_text(encoding="utf-8")
    a, b = "<../notebooks/02_why_add>", "<../notebooks/09_why_10000>"
    assert text.count(a) == 1 and text.count(b) == 1
    swapped = text.replace(a, "\0").replace(b, a).replace("\0", b)
    problems = page_problems(swapped, chapters)
    assert any("'0.9367'" in p and "not printed by 09_why_10000" in p for p in problems)
    assert any("'8.74e-10'" in p and "not printed by 02_why_add" in p for p in problems)


def fake(**outputs: str) -> dict[str, Printed]:
    return {stem: printed([text]) for stem, text in outputs.items()}


CH = fake(c1="share 0.9367, error 3.3e-16\n", c2="offset 1146053\n")


@pytest.mark.parametrize(
    ("page", "problem"),
    [
        ("- It is 0.9367. {doc}`x <../notebooks/c1>`\n", None),
        ("- It is 0.9367. {doc}`../notebooks/c1`\n", None),
        ("- It is 0.9367. {doc}`x <../notebooks/c2>`\n", "not printed by c2"),
        ("- It is 0.9368. {doc}`x <../notebooks/c1>`\n", "not printed by c1"),
        ("- It is 0.9367.\n", "no chapter linked"),
        ("- It is 0.9367 {doc}`a <../notebooks/c1>`, {doc}`b <../notebooks/c2>`\n", "2 chapters linked"),
        ("- It is 0.9367. {doc}`x <../notebooks/c9>`\n", "does not exist"),
        ("- It is 0.9367. {doc}`the errata <errata>`\n", "no chapter linked"),
        # a bullet's link does not cover the next bullet, nor a paragraph, nor a heading
        ("- A {doc}`x <../notebooks/c2>`\n- It is 0.9367.\n  {doc}`x <../notebooks/c2>`\n", "not printed by c2"),
        ("It is 0.9367.\n\n{doc}`x <../notebooks/c1>`\n", "no chapter linked"),
        ("## At 1146053\n{doc}`x <../notebooks/c2>` here.\n", "no chapter linked"),
        # a multi-line item is one block, with its link on the last line
        ("- It is\n  0.9367 and 3.3e-16.\n  {doc}`Chapter 1\n  <../notebooks/c1>`\n", None),
        ('---\nprose_numbers: [{number: "2017", reason: "a year"}]\n---\nIn 2017.\n', None),
        ('---\nprose_numbers: [{number: "2018", reason: "a year"}]\n---\nIn 2017.\n', "no chapter linked"),
        ('---\nprose_numbers: [{number: "2017"}]\n---\nIn 2017.\n', "give a reason"),
    ],
)
def test_small_pages(page, problem):
    problems = page_problems(page, CH)
    if problem is None:
        assert problems == []
    else:
        assert problems and problem in problems[0], problems


def test_blocks_split_at_blank_lines_items_and_headings():
    text = "# T\nintro\nmore\n\n- a\n  b\n- c\n\n## H\npara\n"
    assert [text[s:e].strip() for s, e in blocks(text)] == ["# T", "intro\nmore", "- a\n  b", "- c", "## H", "para"]
