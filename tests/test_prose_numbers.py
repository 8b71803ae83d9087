"""Prose and code agree: every number a chapter's prose quotes is printed by one of its outputs.

The rule (which numbers, in text and inside math, what backs them, how they may be rounded, how a
number that is not computed is allowed) is stated in full in tests/prose_numbers.py. This file
applies it to every notebook (one test per chapter) and every book page, and tests the checker
itself on the cases an independent review measured: a check that let "9646.6" back "9646" could not
see a wrong digit, and one that did not read math let ch3's "$2\\pi\\cdot 9646.6$" change unseen.

Constants of a formula inside math (10000 in $10000^{-2k/d}$) are allowed by tests/math_constants.yaml,
each scoped to a file and a formula. KNOWN_MATH_FINDINGS below lists the numbers inside math that
are neither printed nor constants today (issue 20): each is a finding to fix in its chapter, with the
fix expected; the test fails on any other unbacked number, and on a listed one that is gone.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from pathlib import Path

import nbformat
import pytest
import yaml
from prose_numbers import (
    HOW_TO_FIX,
    mask_non_prose,
    math_as_text,
    math_constants,
    output_texts,
    parse_number,
    printed,
    quoted_numbers,
    unbacked,
)

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
PAGES = sorted((ROOT / "book").glob("*.md"))
CONSTANTS_FILE = Path(__file__).with_name("math_constants.yaml")
CONSTANTS, CONSTANTS_ERRORS = math_constants(yaml.safe_load(CONSTANTS_FILE.read_text()))

# Numbers inside math that no output prints and that are not constants of their formula, as found
# when the check was written (issue 20). (file, number as written, a piece of its formula) -> the fix.
# Fixing one makes the test fail until its line is removed here.
KNOWN_MATH_FINDINGS = {
    ("notebooks/04_visualizing.ipynb", "99", r"k = 0, \dots, 99"):
        "cell 13: print the pairs shown (k = 0 .. 99) in the cell that draws them",
    ("notebooks/04_visualizing.ipynb", "2^16", r"pos < 2^{16}"):
        "cell 28: a test's range: allow it in the cell's metadata naming the test, or print the range checked",
    ("notebooks/04_visualizing.ipynb", "2^20", r"2^{20}"):
        "cell 28: a test's range: allow it in the cell's metadata naming the test, or print the range checked",
    ("notebooks/04_visualizing.ipynb", "1022", r"0, \dots, 1022"):
        "cell 31: print the positions fitted (0 .. 1022, 1023 of them) beside the fit",
    ("notebooks/05_the_clock.ipynb", "512", r"d_\text{model}=512"):
        "cells 2, 8, 14, 27, 34, 36: the chapter's width is never printed: print d_model in its first code cell",
    ("notebooks/05_the_clock.ipynb", "512", r"d_\text{model} = 512"): "cell 25: as above (print d_model)",
    ("notebooks/05_the_clock.ipynb", "512", r"d=512"): "cell 34: as above, and write d_model (not d)",
    ("notebooks/07_through_the_layers.ipynb", "-0.25", r"-0.25"):
        "cell 8: the figure's axis limit: print it with the figure's numbers, or allow it as a drawing setting",
    ("notebooks/08_relative_positions.ipynb", "48", r"L=48"):
        "cell 31 (exercise 1): print d and L in the solution, or allow them as the exercise's chosen sizes",
    ("notebooks/08_relative_positions.ipynb", "2.5", r"\Delta = 2.5"):
        "cell 33 (exercise 2): print the offset in the solution, or allow it as the exercise's chosen value",
    ("notebooks/11_in_the_wild.ipynb", "10^-8", r"10^{-8}"):
        "cell 29: 'down to almost 10^-8' is a result: print the slowest frequency of the variant",
    ("notebooks/11_in_the_wild.ipynb", "999", r"0, \dots, 999"): "cell 29: print the positions fitted (0 .. 999)",
    ("notebooks/11_in_the_wild.ipynb", "999", r"999+\phi"): "cell 29: as above",
    ("notebooks/13_after_sinusoids.ipynb", "10^6", r"10^6"):
        "cell 1: print the encoding of position 10^6 (or the position) in a cell",
    ("book/errata.md", "500", r"50 \le pos < 500"):
        "'learned pattern' entry: chapter 13 should print the range of positions (50 .. 499) it measures",
    ("book/errata.md", "512", r"d_\text{model} = 512"):
        "'clockwise', 'word circle' and 'two square roots' entries: the linked chapters never print d_model = 512",
    ("book/errata.md", "43", r"f(43) = 134.7587"):
        "'decays nicely' entry: chapter 6 prints f(44) but not the offset 43; print both offsets",
    ("book/performance.md", "10^-16", r"10^{-16}"):
        "float64's rounding near 1 is 2^-53 = 1.1e-16: print it (or write 2^{-53}, a constant of the format)",
    ("book/performance.md", "10^-11", r"10^{-11}"):
        "10^5 · 10^-16 is arithmetic on a quoted value: print the error measured at position 10^5",
}  # fmt: skip


def known_finding(file: str, problem: str):
    """The key of KNOWN_MATH_FINDINGS that ``problem`` (a message of ``file``) is, else None."""
    for key in KNOWN_MATH_FINDINGS:
        f, number, formula = key
        m = re.search(r"(?:not printed: |links: )('.*?') in \$(.*?)\$ in: ", problem)
        if f == file and m and m.group(1) == repr(number) and formula in m.group(2):
            return key
    return None


def without_known(file: str, problems: list[str], seen: set) -> list[str]:
    rest = []
    for p in problems:
        key = known_finding(file, p)
        if key is None:
            rest.append(p)
        else:
            seen.add(key)
    return rest

GENERATED = re.compile(r"<!-- generated by [^\n]*?: do not edit below -->.*?<!-- end of generated results -->", re.S)


def constants_of(file: str):
    return [c for c in CONSTANTS if c.file == file]


def notebook_problems(nb, constants=(), used=None) -> list[str]:
    """Every unbacked number and every bad allow entry of ``nb``, as 'cell i: ...' lines.
    ``constants``: the notebook's entries of tests/math_constants.yaml; those used go into ``used``."""
    problems = []
    if "prose_numbers_allow" in nb.metadata:
        problems.append(
            "notebook metadata 'prose_numbers_allow' is no longer read: move each number into the metadata "
            "of the markdown cell that quotes it, one entry per occurrence, with a reason: "
            '"prose_numbers": [{"number": "2017", "reason": "year of the paper"}]'
        )
    backing = printed(output_texts(nb))
    for i, cell in enumerate(nb.cells):
        entries = cell.metadata.get("prose_numbers")
        if cell.cell_type != "markdown":
            if entries is not None:
                problems.append(f"cell {i}: 'prose_numbers' on a {cell.cell_type} cell means nothing; remove it")
            continue
        missing, errors = unbacked(cell.source, backing, entries, constants, used)
        problems += [f"cell {i}: not printed: {m}" for m in missing]
        problems += [f"cell {i}: {e}" for e in errors]
    return problems


@functools.cache
def file_problems(file: str) -> tuple[list[str], frozenset, frozenset]:
    """(the problems of ``file``, a notebook or a book page, left after KNOWN_MATH_FINDINGS; the
    constants of tests/math_constants.yaml it uses; the known findings it still has)."""
    used, seen = set(), set()
    path = ROOT / file
    if path.suffix == ".ipynb":
        problems = notebook_problems(nbformat.read(path, as_version=4), constants_of(file), used)
    else:
        meta, body = page_parts(path.read_text())
        problems = []
        if "prose_numbers_allow" in meta:
            problems.append("front matter 'prose_numbers_allow' is no longer read: use 'prose_numbers' entries")
        missing, errors = unbacked(body, page_backing(body, all_outputs()), meta.get("prose_numbers"),
                                   constants_of(file), used)
        problems += [f"printed by none of the chapters its paragraph (or section) links: {m}" for m in missing] + errors
    return without_known(file, problems, seen), frozenset(used), frozenset(seen)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_number_in_prose_is_printed(path):
    problems = file_problems(f"notebooks/{path.name}")[0]
    assert not problems, f"{path.name}: {len(problems)} problem(s)\n  " + "\n  ".join(problems) + "\n" + HOW_TO_FIX


def page_parts(text: str):
    """(front matter as a dict, the page's body with its generated block blanked out)."""
    front = re.match(r"---\n(.*?)\n---\n", text, re.S)
    meta = yaml.safe_load(front.group(1)) or {} if front else {}
    body = text[front.end() :] if front else text
    return meta, GENERATED.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), body)


CHAPTER_LINK = re.compile(r"notebooks/(\d\d_\w+)")


@functools.cache
def all_outputs():
    return outputs_lookup({p.stem: output_texts(nbformat.read(p, as_version=4)) for p in NOTEBOOKS})


def outputs_lookup(texts: dict[str, list[str]]):
    """``of(chapters)``: the printed numbers of those chapters' outputs (``texts``: chapter -> texts);
    ``of.every``: every chapter."""
    cache = {}

    def of(chapters: frozenset[str]):
        if chapters not in cache:
            cache[chapters] = printed(t for c in sorted(chapters) for t in texts[c])
        return cache[chapters]

    of.every = frozenset(texts)
    return of


def page_backing(body: str, outputs_of):
    """A function of an offset in ``body``: the outputs that back a number there. A paragraph is
    backed by the chapters it links; a paragraph that links none, by those its section (from one
    heading to the next) links; a section that links none, by every notebook."""
    spans = []  # (start, end, chapters)
    bounds = [0, *(m.start() for m in re.finditer(r"^#+ ", body, re.M)), len(body)]
    for a, b in itertools.pairwise(bounds):
        in_section = frozenset(CHAPTER_LINK.findall(body[a:b]))
        for para in re.finditer(r"(?:[^\n]+\n?)+", body[a:b]):
            linked = frozenset(CHAPTER_LINK.findall(para.group(0))) or in_section or outputs_of.every
            spans.append((a + para.start(), a + para.end(), linked & outputs_of.every or outputs_of.every))

    def at(start: int):
        return outputs_of(next((c for a, b, c in spans if a <= start < b), outputs_of.every))

    return at


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_book_pages_quote_only_computed_numbers(path):
    problems = file_problems(f"book/{path.name}")[0]
    assert not problems, (
        f"{path.name}: {len(problems)} problem(s)\n  " + "\n  ".join(problems) + "\nPrint the number in a chapter, "
        'or allow it in the page\'s front matter: prose_numbers: [{number: "2017", reason: "year of the paper"}]'
    )


def test_math_constants_and_known_findings_are_well_formed_and_not_stale():
    assert not CONSTANTS_ERRORS, "tests/math_constants.yaml:\n  " + "\n  ".join(CONSTANTS_ERRORS)
    files = [f"notebooks/{p.name}" for p in NOTEBOOKS] + [f"book/{p.name}" for p in PAGES]
    assert {c.file for c in CONSTANTS} <= set(files), "tests/math_constants.yaml names a file that is not in the book"
    used = set().union(*(file_problems(f)[1] for f in files))
    seen = set().union(*(file_problems(f)[2] for f in files))
    stale = [f"{c.file}: {c.number.written} in {c.formula!r}" for c in CONSTANTS if c not in used]
    assert not stale, (
        "these entries of tests/math_constants.yaml allow nothing (the number is printed, or the formula "
        "changed): remove them\n  " + "\n  ".join(stale)
    )
    fixed = [f"{k}: {v}" for k, v in KNOWN_MATH_FINDINGS.items() if k not in seen]
    assert not fixed, "fixed, or changed: remove from KNOWN_MATH_FINDINGS in tests/test_prose_numbers.py\n  " + (
        "\n  ".join(fixed)
    )


def test_a_page_paragraph_is_backed_only_by_the_chapters_it_links():
    of = outputs_lookup({"01_a": ["0.821\n"], "02_b": ["0.5\n"]})
    page = (
        "# One\n\nSee [A](../notebooks/01_a.ipynb): 0.821.\n\nAnd 0.5 here.\n\n"  # section links A only
        "# Two\n\n[B](../notebooks/02_b.ipynb) gives 0.821.\n\n"  # linked B does not print it
        "# Three\n\nNo link: 0.821 and 0.5.\n"  # no link in the section: every chapter backs it
    )
    missing, errors = unbacked(page, page_backing(page, of), None)
    assert errors == []
    assert [m.split(" in: ")[0] for m in missing] == ["'0.5'", "'0.821'"]
    assert "And 0.5 here" in missing[0] and "gives 0.821" in missing[1]


def test_only_the_performance_page_has_a_generated_block():
    # tests/test_performance_page.py ties that block to book/_data/performance.json; no other page may skip the check
    assert [p.name for p in PAGES if GENERATED.search(p.read_text())] == ["performance.md"]


# ---- the checker itself ---------------------------------------------------------------------------
def nb_with(prose: str, *outputs, metadata=None, tags=()):
    """A notebook with one markdown cell and one code cell whose outputs are ``outputs``."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell(prose, metadata=metadata or {}),
        nbformat.v4.new_code_cell("x", outputs=list(outputs), metadata={"tags": list(tags)}),
    ]
    return nb


def stdout(text):
    return nbformat.v4.new_output("stream", name="stdout", text=text)


def problems_of(prose, printed_text, **kw):
    return notebook_problems(nb_with(prose, stdout(printed_text), **kw))


def words(text):
    return [q.written for q in quoted_numbers(text)]


@pytest.mark.parametrize(
    ("prose", "out"),
    [
        ("The loss is 9646.", "loss 9646.6\n"),  # an integer is not the prefix of a decimal
        ("The ratio is 0.821.", "ratio 0.8219\n"),  # 0.8219 rounds to 0.822
        ("A share of 34% of the pairs.", "share 43%\n"),
        ("A share of 34% of the pairs.", "share 0.43\n"),
        ("It keeps about 90% of the mass.", "kept 70%\n"),
        ("It keeps about 90% of the mass.", "kept 0.7043\n"),
        ("The table has 128 rows.", "x = np.zeros(128)\n".replace("128", "1280")),  # 128 is a prefix of 1280
        ("We found 12 pairs.", "found 112 pairs\n"),  # nor a suffix
        ("The error is 1.5e-07.", "error 1.5e-06\n"),
        ("Offsets up to 10⁴.", "offsets up to 10001\n"),  # a power written alone must be printed exactly
        ("We ran 10,000 steps.", "ran 1000 steps\n"),
        ("The value -0.5 appears.", "0.44\n"),
        ("about 1000 of them", "1600\n"),
    ],
)
def test_measured_wrong_numbers_fail(prose, out):
    assert len(problems_of(prose, out)) == 1


@pytest.mark.parametrize(
    ("prose", "out"),
    [
        ("The loss is 9646.6.", "loss 9646.6\n"),
        ("The loss is 9646.", "loss 9646.4\n"),  # rounded to the digits written
        ("The loss is 9647.", "loss 9646.6\n"),
        ("The ratio is 0.821.", "ratio 0.82149\n"),
        ("The ratio is 0.82.", "ratio 0.8249\n"),
        ("The ratio is 0.8219.", "ratio 0.8219\n"),
        ("The ratio is 0.8200.", "ratio 0.82\n"),
        ("A share of 43% of the pairs.", "share 43%\n"),
        ("A share of 43% of the pairs.", "share 43.0 %\n"),
        ("A share of 43% of the pairs.", "share 0.43\n"),
        ("A share of 43% of the pairs.", "share 0.4301\n"),
        ("A share of 43 percent of the pairs.", "share 42.6%\n"),
        ("A share of 4% of the pairs.", "share 0.04\n"),
        ("It keeps about 90% of the mass.", "kept 87.2%\n"),
        ("It keeps ≈ 0.3 of it.", "0.27\n"),
        ("It keeps roughly 1000 of them.", "960\n"),
        ("nearly 1500 of them", "1460\n"),
        ("We ran 10,000 steps.", "ran 10000 steps\n"),
        ("We ran 10 000 steps.", "ran 10000 steps\n"),
        ("We ran 10\u202f000 steps.", "ran 10,000 steps\n"),
        ("At 1,146,053 places.", "at (1146053, 2)\n"),
        ("The error is 1e-12.", "error 1.0e-12\n"),
        ("The error is 8.74e-10.", "error 8.7412e-10\n"),
        ("A factor 5×10⁷.", "5.2e+07\n"),
        ("A factor 5 × 10^7.", "50000000\n"),
        ("Offsets up to 10⁴.", "offsets up to 10000\n"),
        ("Up to 2^20 positions.", "1048576\n"),
        ("The value −0.41 appears.", "[-0.41  0.2]\n"),
        ("It is 0.5.", "[0.  0.5 1. ]\n"),
        ("A ratio of 1.43× the size.", "ratio 1.43x\n"),
        ("Between 10 and 20 tokens.", "10 20\n"),
        ("Between 10–20 tokens.", "10 20\n"),
        ("Between 10-20 tokens.", "10 20\n"),
        ("Why 10000?", "base = 10000\n"),
    ],
)
def test_correct_numbers_pass(prose, out):
    assert problems_of(prose, out) == []


def test_tokens_are_whole_and_names_are_not_numbers():
    assert words("float32 and bfloat16 641 of T5, GPT-2, 7B, 32k, the 16th pair, x86 and v1.2.3") == ["641"]
    assert words("pairs 0 to 7, 2 of them, and 1.0 and 12 and 00:00") == ["1.0", "12"]
    assert words("Chapter 13, chapters 10 and 12, chapters 8–13, section 13 and 2017-11-19") == ["13", "2017-11-19"]
    assert words("a ratio (0.823), 1,000, 10 000 and 1e-5; 43%; 44 percent; 5·10⁷; 10⁻⁵") == [
        "0.823", "1,000", "10 000", "1e-5", "43%", "44 percent", "5·10⁷", "10⁻⁵",
    ]  # fmt: skip
    q = {x.written: x for x in quoted_numbers("0.820, 1,000, 43%, about 90%, about 0.30, 5×10⁷, 10⁴ and 1e-5")}
    assert (q["0.820"].value, q["0.820"].place) == (parse_number("0.82").value, parse_number("0.001").value)
    assert q["1,000"].value == 1000 and q["1,000"].place == 1
    assert q["43%"].percent and q["43%"].value == 43
    assert q["90%"].approx and q["90%"].place == 10
    assert q["0.30"].approx and q["0.30"].place == parse_number("0.01").value
    assert q["5×10⁷"].value == 50_000_000 and q["5×10⁷"].place == 10_000_000
    assert q["10⁴"].value == 10_000 and q["10⁴"].place == 0
    assert q["1e-5"].place == q["1e-5"].value


def test_what_is_not_prose_is_not_read():
    text = (
        "(sec-label)=\n# Why 10000?\n\nInline $d = 512$ and $$\n256\n$$ and \\(128\\) and `x = 1024`,\n"
        "a [link 33](https://example.org/issues/1003) and https://arxiv.org/abs/1706.03762,\n"
        "{cite}`vaswani2017attention`, {doc}`the 12 rotations <12_rope>`, {term}`base`,\n"
        '<img width="640" alt="x">,\n'
        "<!-- 777 -->, a note[^42].\n\n```python\nx = 4096\n```\n\n"
        "```{admonition} Title with 65\n:class: tip 99\nBody with 0.25\n```\n"
        "```{figure} fig_300.png\n:width: 400px\nCaption 0.75\n```\n"
        "```{bibliography}\n:filter: 2017\n```\n"
        "\\begin{align}\n 31 \\end{align}\n%comment 81\n"
    )
    assert words(text) == ["10000", "512", "256", "128", "33", "12", "65", "0.25", "0.75", "31"]  # math is read
    masked = mask_non_prose(text)
    assert len(masked) == len(text) and "512" not in masked  # math is read, but not as text
    text_only = "\n".join(line for line in text.split("\n") if "$" not in line and "\\" not in line)
    assert all(not q.math for q in quoted_numbers(text_only))


@pytest.mark.parametrize(
    ("latex", "shown"),
    [
        (r"2\pi\cdot 9646.6", "2 · 9646.6"),  # the reviewed example: ch3's wavelength
        (r"\omega_k = 10000^{-2k/d_\text{model}}", "= 10000"),  # a subscript is a name; only the base of 10000^{…}
        (r"5\times 10^{7}", "5 × 10^7"),
        (r"1.5 \times 10^{-7}", "1.5 × 10^-7"),
        (r"10{,}000 + 10\,000", "10,000 + 10 000"),
        (r"\omega_{255} + x_{a_{10}}", "+ x"),  # indices, even nested
        (r"x^{10} + 2^{20} + e^{-10}", "x + 2^20 + e"),  # only a number's power is a number
        (r"\sqrt{512}", "512"),
        (r"\approx 0.30", "≈ 0.30"),
        (r"\text{about } 1000\,\%", "about 1000 %"),
    ],
)
def test_math_is_read_as_what_it_shows(latex, shown):
    assert math_as_text(latex) == shown


def test_numbers_inside_math_follow_the_rule_of_text():
    text = r"$2\pi\cdot 9646.6$, $$d = 512$$, $\omega_{255}$, $2^{-24}$ and $k = 3$"
    assert words(text) == ["9646.6", "512", "2^-24"]
    (q,) = quoted_numbers(r"about $0.30$")  # "about" before the formula counts
    assert q.approx and q.math == "0.30" and q.place == parse_number("0.01").value
    # the reviewed example: a changed digit inside math is caught like one in text
    assert problems_of(r"The wavelength is $2\pi\cdot 9646.6$.", "9646.6\n") == []
    (p,) = problems_of(r"The wavelength is $2\pi\cdot 9646.7$.", "9646.6\n")
    assert p.startswith(r"cell 0: not printed: '9646.7' in $2\pi\cdot 9646.7$ in: The wavelength")
    assert len(problems_of(r"$\sqrt{512}$", "51\n")) == 1
    assert len(problems_of(r"$\approx 10^{-4}$", "0.0001\n")) == 0
    assert len(problems_of(r"$2^{-24}$", "5.960464477539063e-08\n")) == 0  # float64's repr of it
    assert len(problems_of(r"$2^{-24}$", "5.96e-08\n")) == 1  # a power without "about" is exact
    # a cell's allow entry covers math too, one entry per occurrence
    year = {"number": "2017", "reason": "year of the paper"}
    assert problems_of(r"In $2017$.", "", metadata={"prose_numbers": [year]}) == []


def test_chapter_3_fails_with_a_changed_digit_inside_math():
    path = ROOT / "notebooks" / "03_the_formula.ipynb"
    nb = nbformat.read(path, as_version=4)
    assert notebook_problems(nb, constants_of("notebooks/03_the_formula.ipynb")) == []
    cells = [c for c in nb.cells if c.cell_type == "markdown" and r"\cdot 9646.6$" in c.source]
    assert cells, "the example of issue 20 moved: plant the error in another number inside math"
    cells[0].source = cells[0].source.replace(r"\cdot 9646.6$", r"\cdot 9646.7$")
    (p,) = notebook_problems(nb, constants_of("notebooks/03_the_formula.ipynb"))
    assert "'9646.7'" in p


def test_a_math_constant_is_scoped_to_its_file_and_formula():
    (c,), errors = math_constants([{"file": "f.md", "formula": "10000^{-2k/d}", "number": "10000", "reason": "base"}])
    assert errors == []
    used = set()
    text = r"$\omega_k = 10000^{-2k/d}$ and $\mathrm{base} = 10000$."
    missing, errors = unbacked(text, printed([]), None, [c], used)
    assert used == {c} and errors == [] and len(missing) == 1 and r"$\mathrm{base} = 10000$" in missing[0]
    assert unbacked("10000 in text", printed([]), None, [c])[0] == ["'10000' in: 10000 in text"]  # math only
    bad = [
        {"file": "f.md", "formula": "10000^{-2k/d}", "number": "10000"},  # no reason
        {"file": "f.md", "formula": "d^{-1}", "number": "10000", "reason": "r"},  # not in the formula
        {"file": "f.md", "formula": "10000", "number": "ten", "reason": "r"},
    ]
    assert [len(math_constants([b])[1]) for b in bad] == [1, 1, 1]


def test_a_known_finding_matches_its_file_number_and_formula():
    key = ("notebooks/05_the_clock.ipynb", "512", r"d_\text{model}=512")
    assert key in KNOWN_MATH_FINDINGS
    msg = r"cell 2: not printed: '512' in $d_\text{model}=512$ in: for $d_\text{model}=512$, 256 hands."
    assert known_finding(key[0], msg) == key
    assert known_finding(key[0], msg.replace("'512'", "'513'").replace("=512", "=513")) is None
    assert known_finding("notebooks/04_visualizing.ipynb", msg) is None
    assert known_finding(key[0], "cell 2: not printed: '512' in: for 512 hands.") is None  # text is never known


def test_figure_digests_code_stderr_and_unchecked_outputs_do_not_back_prose():
    digest = nbformat.v4.new_output(
        "display_data", data={"image/png": "iVBOR", "text/plain": "Figure data: 700x300 px, 1 axes\n n=64 min=0.821"}
    )
    assert len(notebook_problems(nb_with("It is 0.821.", digest))) == 1
    err = nbformat.v4.new_output("stream", name="stderr", text="0.821\n")
    assert len(notebook_problems(nb_with("It is 0.821.", err))) == 1
    ignored = stdout("0.821\n")
    assert len(notebook_problems(nb_with("It is 0.821.", ignored, tags=["nbval-ignore-output"]))) == 1
    assert notebook_problems(nb_with("It is 0.821.", ignored)) == []
    nb = nb_with("It is 0.821.")
    nb.cells[1].source = "print(0.821)"  # code source backs nothing
    assert len(notebook_problems(nb)) == 1
    result = nbformat.v4.new_output("execute_result", data={"text/html": "<td style='width:0.821px'>0.5</td>"})
    assert len(notebook_problems(nb_with("It is 0.821.", result))) == 1  # HTML attributes back nothing
    assert notebook_problems(nb_with("It is 0.5.", result)) == []


def test_allow_entries_are_scoped_reasoned_and_not_stale():
    year = {"number": "2017", "reason": "year of the paper"}
    assert problems_of("Published in 2017.", "nothing\n", metadata={"prose_numbers": [year]}) == []
    # one entry per occurrence
    assert len(problems_of("In 2017, and in 2017.", "", metadata={"prose_numbers": [year]})) == 1
    assert problems_of("In 2017, and in 2017.", "", metadata={"prose_numbers": [year, year]}) == []
    # no reason, or an empty one
    assert len(problems_of("In 2017.", "", metadata={"prose_numbers": [{"number": "2017"}]})) == 2
    assert len(problems_of("In 2017.", "", metadata={"prose_numbers": [{"number": "2017", "reason": " "}]})) == 2
    # stale: not quoted, or printed anyway
    assert len(problems_of("Nothing.", "", metadata={"prose_numbers": [year]})) == 1
    assert len(problems_of("In 2017.", "2017\n", metadata={"prose_numbers": [year]})) == 1
    # an entry is for its cell only
    nb = nb_with("In 2017.", stdout(""), metadata={"prose_numbers": [year]})
    nb.cells.append(nbformat.v4.new_markdown_cell("Again 2017."))
    (p,) = notebook_problems(nb)
    assert p.startswith("cell 2: not printed: '2017' in: Again 2017.")
    # written forms: the entry matches the number's value
    assert problems_of("At 10,000.", "", metadata={"prose_numbers": [{"number": "10000", "reason": "r"}]}) == []
    assert problems_of("At 43 percent.", "", metadata={"prose_numbers": [{"number": "43%", "reason": "r"}]}) == []
    assert len(problems_of("At 43 percent.", "", metadata={"prose_numbers": [{"number": "43", "reason": "r"}]})) == 2
    # malformed entries
    assert len(problems_of("x", "", metadata={"prose_numbers": {"number": "1"}})) == 1
    assert len(problems_of("x", "", metadata={"prose_numbers": ["2017"]})) == 1
    assert len(problems_of("x", "", metadata={"prose_numbers": [{"number": "20 17", "reason": "r"}]})) == 1


def test_the_old_notebook_level_list_fails_with_a_pointer():
    nb = nb_with("In 2017.", stdout("2017\n"))
    nb.metadata["prose_numbers_allow"] = ["2017"]
    (p,) = notebook_problems(nb)
    assert "no longer read" in p and "markdown cell" in p
    nb = nb_with("x", stdout(""))
    nb.cells[1].metadata["prose_numbers"] = []
    assert notebook_problems(nb) == ["cell 1: 'prose_numbers' on a code cell means nothing; remove it"]


def test_the_message_names_cell_number_and_sentence():
    nb = nb_with("# Title\n\nFirst sentence. The ratio is 0.821 here. Last one.", stdout("0.8219\n"))
    assert notebook_problems(nb) == ["cell 0: not printed: '0.821' in: The ratio is 0.821 here."]


def test_page_front_matter_and_generated_block():
    text = (
        '---\nprose_numbers: [{number: "3.11", reason: "a Python version"}]\n---\nPython 3.11 and 0.5.\n'
        "<!-- generated by x from y: do not edit below -->\n| 12.5 |\n<!-- end of generated results -->\n"
    )
    meta, body = page_parts(text)
    backing = printed(["0.5"])
    assert unbacked(body, backing, meta.get("prose_numbers")) == ([], [])
    assert unbacked(body, printed([]), meta.get("prose_numbers"))[0] == ["'0.5' in: Python 3.11 and 0.5."]
    assert json.dumps(meta) == '{"prose_numbers": [{"number": "3.11", "reason": "a Python version"}]}'
