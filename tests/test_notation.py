"""One symbol, one meaning: the book's notation as a check.

book/notation.md is the source: :func:`notation` reads its tables into a machine-readable list,
symbol -> meaning. ``CONFLICTS`` below names, for a symbol of that list, the uses that give it another
meaning (``k`` as an offset where it is the pair index, ``\\Delta = m - n`` where the book's offset is
``n - m``, ``L`` as a number of layers, ``d`` beside ``d_k`` in one passage, ...); each rule states
the meaning it protects, and the test checks that the notation page still says so. Every markdown
cell of every chapter and every paragraph of every book page is searched, and every string written
in a chapter's code (axis labels, titles, legends, printed text), with Δ, φ, ω and − read as
``\\Delta``, ``\\phi``, ``\\omega`` and ``-`` (code itself, names and comments, is not read).

``KNOWN_NOTATION_FINDINGS`` lists the conflicts found when the check was written (issue 20), each
with the fix expected; the test fails on any other, and on a listed one that is gone (remove it).
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from prose_numbers import _MASKS, _mask_fences, _sub_blank

ROOT = Path(__file__).resolve().parents[1]
NOTATION = ROOT / "book" / "notation.md"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
PAGES = sorted((ROOT / "book").glob("*.md"))


# ---- the notation page, machine-readable ---------------------------------------------------------
def notation(text: str | None = None) -> dict[str, str]:
    """Every symbol of the notation page's tables -> its meaning (the row's last column). A row that
    names several symbols (``$W_Q$, $W_K$``) gives each the row's meaning."""
    text = NOTATION.read_text() if text is None else text
    out: dict[str, str] = {}
    for line in text.splitlines():
        cols = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if len(cols) < 2 or set(cols[0]) <= set("-: ") or cols[0] == "symbol":
            continue
        for sym in re.findall(r"\$([^$]+)\$", cols[0]):
            out.setdefault(sym.strip(), cols[-1])
    return out


@dataclass(frozen=True)
class Conflict:
    """A use of ``symbol`` that gives it another meaning than the notation page's."""

    id: str
    symbol: str  # as the notation page writes it
    meaning: str  # a piece of the page's meaning that the rule protects
    pattern: re.Pattern
    why: str


def _rx(*alternatives: str) -> re.Pattern:
    return re.compile("|".join(f"(?:{a})" for a in alternatives))


DASH = r"\s*[-−]\s*"
CONFLICTS = [
    Conflict("k-offset", "k", "index of a sin/cos **pair**",
             _rx(r"\$k\$[ -](?:tokens?|places?|positions?|steps?)\s+(?:back|ahead|earlier|later|apart|before)",
                 r"M\(k\)",
                 r"(?:offset|lookback|look-back|lag|shift(?:ed)?)\s+(?:of\s+|with\s+|by\s+)?\$k(?:\s*=\s*\d+)?\$"),
             "k is the pair index; an offset is \\Delta"),
    # the page allows one reading more: chapter 8's head "looks Delta tokens back", the key at n = m - Delta
    Conflict("delta-sign", "\\Delta", "\\Delta = n - m",
             _rx(rf"\\Delta\s*=\s*m{DASH}n\b", rf"\bm{DASH}n\s*=\s*\\Delta\b", r"\\Delta\s*=\s*i\s*[-−]\s*j\b"),
             "\\Delta = n - m (key minus query): a key behind the query has \\Delta < 0"),
    Conflict("phi-offset", "\\phi", "a shift applied to a position",
             _rx(r"\$\\phi\$ tokens (?:back|ahead)"),
             "\\phi shifts a position; the offset between a query and its key is \\Delta"),
    Conflict("L-layers", "L", "Never a number of layers",
             _rx(r"\$L\$[ -]layers?", r"layers?\s*\(?\$L\$", r"\\ell\s*=\s*1\s*,\s*\\dots\s*,\s*L\b",
                 r"number of layers,?\s+\$L"),
             "L is a sequence length; the number of layers is N"),
    Conflict("row-vectors", "M(\\phi)", "M(\\phi)\\,\\mathrm{PE}(pos)^\\top = \\mathrm{PE}(pos+\\phi)^\\top",
             _rx(r"M(?:_k)?\((?:\\phi|\\Delta|k)\)\s*(?:\\,)?\s*\\mathrm\{PE\}\([^()]*\)(?!\^\\top)"),
             "vectors are rows (x W): a matrix left of a row vector PE(pos) acts on its transpose"),
    Conflict("x-coordinate", "x", "never a coordinate of a plot",
             _rx(r"\bx\s*=\s*\\(?:cos|sin)\b"),
             "x is a layer's input vector; the axes of a figure are horizontal and vertical"),
    Conflict("float-e-m", "\\nu", "stored significand bits",
             _rx(rf"2\^\{{?e{DASH}m\b", r"\[2\^\{?e\}?\s*,", r"\$m\$ stored significand"),
             "e is an embedding and m a position; a float's exponent is E and its significand bits \\nu"),
    Conflict("base-n", "\\mathrm{base}", "Some source articles call it $n$; this book does not",
             _rx(r"\bn\s*=\s*10\{?,?\}?\s*000\b", r"10000\^\{?\(?2[ik]/n\b"),
             "the base of the frequencies is \\mathrm{base}, n a key position"),
    Conflict("slope-m", "\\mathrm{slope}", "The ALiBi paper calls it $m$",
             _rx(r"\$m_h\$", r"slopes?\s+\$m\$"),
             "an ALiBi slope is \\mathrm{slope}; m is a query position"),
    Conflict("n-count", "n", "the positions of a query and of a key",
             _rx(r"2\\pi\s*n\b", r"\b2 pi n\b"),
             "n is a key position; a whole number of turns is c, as in chapter 9's $p - p' = 2\\pi c$"),
    Conflict("h-hidden", "H_\\ell", "Not $h$, the number of heads",
             _rx(r"\bh_\\ell\b", r"\bh\^\{?\(\\ell\)"),
             "h is the number of heads; hidden states are H_\\ell"),
]  # fmt: skip

# d beside d_k in one passage: "d_\text{model}, short d" holds only "where no other width is in play"
BARE_D = re.compile(r"(?<![\\\w])d(?![_\w\\])")
D_K = re.compile(r"d_k\b|d_\{k\}")
MATH = re.compile(r"\$\$.*?\$\$|(?<![\\$])\$(?=\S)(?:[^$\n\\]|\\.|\n(?![ \t]*\n))+?(?<![\\\s])\$(?!\d)", re.S)


def searchable(text: str) -> str:
    """``text`` (markdown) with code blocks, inline code and HTML comments blanked (same length)."""
    text = "\n".join(_mask_fences(text.split("\n")))
    for pattern, _keep in (_MASKS[0], _MASKS[6]):  # inline code, HTML comments
        text = _sub_blank(pattern, text)
    return text


UNICODE_SYMBOLS = {"Δ": "\\Delta", "φ": "\\phi", "ω": "\\omega", "−": "-"}


def code_strings(source: str) -> list[str]:
    """Every string constant of a code cell (f-strings give their literal parts), with the symbols of
    ``UNICODE_SYMBOLS`` written as the notation page writes them. IPython lines (``%``, ``!``) are skipped."""
    source = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    found = [n.value for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return [functools.reduce(lambda t, kv: t.replace(*kv), UNICODE_SYMBOLS.items(), s) for s in found]


def passages(file: str) -> list[tuple[str, str]]:
    """(where, text) of every passage of ``file``: a chapter's markdown cells and each string of its code
    cells, a page's paragraphs."""
    path = ROOT / file
    if path.suffix == ".ipynb":
        nb = nbformat.read(path, as_version=4)
        return [(f"cell {i}", searchable(c.source)) for i, c in enumerate(nb.cells) if c.cell_type == "markdown"] + [
            (f"cell {i} (a string in code)", text)
            for i, c in enumerate(nb.cells) if c.cell_type == "code" for text in code_strings(c.source)
        ]  # fmt: skip
    text = searchable(path.read_text())
    paragraph = r"^\|.*\n?|(?:^(?!\|)[^\n]+\n?)+"  # a table row is a passage of its own
    return [(f"line {text.count(chr(10), 0, m.start()) + 1}", m.group(0)) for m in re.finditer(paragraph, text, re.M)]


def conflicts_in(text: str) -> list[tuple[str, str]]:
    """(rule id, the text that matched) of every conflicting use in one passage."""
    found = [(c.id, m.group(0)) for c in CONFLICTS for m in c.pattern.finditer(text)]
    formulas = [m.group(0) for m in MATH.finditer(text)]
    bare = [f for f in formulas if BARE_D.search(f)]
    if bare and any(D_K.search(f) for f in formulas):
        found.append(("d-and-d_k", bare[0]))
    return found


@functools.cache
def findings(file: str) -> tuple[tuple[str, str, str], ...]:
    """(where, rule id, excerpt) of every conflict in ``file``."""
    return tuple((where, rule, " ".join(hit.split()))
                 for where, text in passages(file) for rule, hit in conflicts_in(text))  # fmt: skip


# The conflicts found when this check was written (issue 20): (file, rule, a piece of the excerpt) -> fix.
KNOWN_NOTATION_FINDINGS: dict[tuple[str, str, str], str] = {
}  # fmt: skip


def known(file: str, rule: str, excerpt: str):
    return next((k for k in KNOWN_NOTATION_FINDINGS if k[:2] == (file, rule) and k[2] in excerpt), None)


FILES = [f"notebooks/{p.name}" for p in NOTEBOOKS] + [f"book/{p.name}" for p in PAGES]


def test_the_notation_page_is_a_list_of_symbols_with_one_meaning_each():
    table = notation()
    assert len(table) >= 40, f"the notation page's tables give only {len(table)} symbols"
    assert "Never a number of layers" in table["L"] and "pair" in table["k"] and "\\Delta = n - m" in table["\\Delta"]
    rows = [s for line in NOTATION.read_text().splitlines() if line.startswith("| $")
            for s in re.findall(r"\$([^$]+)\$", line.split("|")[1])]  # fmt: skip
    twice = sorted({s for s in rows if rows.count(s) > 1} - {"\\omega_k"})  # omega_k: the encoding's, and a head's
    assert not twice, f"symbols defined in two rows of the notation page: {twice}"


@pytest.mark.parametrize("rule", CONFLICTS, ids=lambda c: c.id)
def test_each_rule_protects_a_meaning_the_notation_page_gives(rule):
    table = notation()
    assert rule.symbol in table, f"{rule.id}: the notation page no longer defines ${rule.symbol}$"
    assert rule.meaning in table[rule.symbol], (
        f"{rule.id}: the notation page's meaning of ${rule.symbol}$ changed; update the rule\n  {table[rule.symbol]}"
    )


@pytest.mark.parametrize("file", FILES, ids=lambda f: Path(f).name)
def test_every_symbol_keeps_its_one_meaning(file):
    bad = [f"{where}: {rule}: {ex[:160]}" for where, rule, ex in findings(file) if not known(file, rule, ex)]
    why = {c.id: c.why for c in CONFLICTS} | {"d-and-d_k": "d is short for d_model only where no other width is in use"}
    rules = sorted({b.split(": ")[1] for b in bad})
    assert not bad, f"{file}: {len(bad)} use(s) against book/notation.md\n  " + "\n  ".join(bad) + "\n" + "\n".join(
        f"{r}: {why[r]}" for r in rules
    )


def test_known_notation_findings_are_still_there():
    gone = [f"{k}: {fix}" for k, fix in KNOWN_NOTATION_FINDINGS.items()
            if not any(known(k[0], rule, ex) == k for _w, rule, ex in findings(k[0]))]  # fmt: skip
    assert not gone, "fixed or changed: remove from KNOWN_NOTATION_FINDINGS (tests/test_notation.py)\n  " + (
        "\n  ".join(gone)
    )


# ---- the check itself, on planted conflicts --------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("the token exactly $k$ places back", "k-offset"),
        ("with $W_Q = s\\,M(k)$", "k-offset"),
        ("the easier lookback with $k = 1$", "k-offset"),
        ("the offset $\\Delta = m - n$", "delta-sign"),
        ("so that $m - n = \\Delta$", "delta-sign"),
        ("the offset $\\Delta = i - j$", "delta-sign"),
        ("look exactly $\\phi$ tokens back", "phi-offset"),
        ("a stack of $L$ layers", "L-layers"),
        ("for $\\ell = 1, \\dots, L$", "L-layers"),
        ("$\\mathrm{PE}(pos+\\phi) = M(\\phi)\\,\\mathrm{PE}(pos)$", "row-vectors"),
        ("With the usual $x = \\cos$, $y = \\sin$", "x-coordinate"),
        ("$2^{e-m}$ for numbers in $[2^e, 2^{e+1})$", "float-e-m"),
        ("$\\sin(pos/10000^{2i/n})$", "base-n"),
        ("ALiBi's slope $m$ for each head", "slope-m"),
        ("the hidden state $h_\\ell$", "h-hidden"),
        ("the peaks sit near $3 + 2\\pi n$", "n-count"),
        ("3 + 2 pi n: 9.3, 15.6", "n-count"),
        ("scores $\\mathbf q\\cdot\\mathbf k/\\sqrt{d_k}$ with entries $\\mathcal N(0, 1/d)$", "d-and-d_k"),
    ],
)
def test_a_planted_conflict_is_found(text, rule):
    assert rule in [r for r, _hit in conflicts_in(searchable(text))]


@pytest.mark.parametrize(
    "text",
    [
        "the pair $k$ turns by $\\omega_k$; the key $n = m + \\Delta$",
        "A head that looks $\\Delta$ tokens back, at the key $n = m - \\Delta$",  # allowed by the page (chapter 8)
        "$\\mathrm{PE}(m)\\,M(\\phi)^\\top W M(\\phi)\\,\\mathrm{PE}(n)^\\top$",  # a column: M acts on it
        "$N$ layers of width $d$, and $L = 64$ positions",
        "a width $d = 512$, and $\\sqrt{d_\\text{model}}$",  # d beside d_model is the same width
        "`x = cos(theta)` in code, `M(k)` too",
    ],
)
def test_the_books_own_uses_pass(text):
    assert conflicts_in(searchable(text)) == []


def test_a_conflict_in_a_figure_label_is_found():
    """Chapter 16's offset axis once read 'Δ = i − j' (the page's Δ has the other sign, and j is a
    dimension index), in a code cell that the markdown search never read."""
    cell = 'ax.set_xlabel("offset Δ = i − j")\nprint(f"{x:.1f} for φ tokens back")\n%time f(1)'
    assert code_strings(cell) == ["offset \\Delta = i - j", " for \\phi tokens back", ".1f"]
    assert [rule for text in code_strings(cell) for rule, _hit in conflicts_in(text)] == ["delta-sign"]
    assert code_strings('ax.set_xlabel(r"tokens back $\\Delta$ (key at $m - \\Delta$)")') == [
        "tokens back $\\Delta$ (key at $m - \\Delta$)"
    ]

