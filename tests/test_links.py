"""Links say where they go: cross-references name the chapter and the section they open, and links
to code are pinned.

The build (``jupyter-book build -W -n``) fails on a ``{doc}`` or ``{ref}`` target that does not
exist; it cannot see a link whose *words* are wrong. This file reads the MyST sources and the table
of contents (no build needed) and checks:

- every ``{doc}`` target exists, and "chapter N" (or "the next chapter") in its text is the number
  the table of contents gives that chapter (``use_multitoc_numbering``: 1 to 18 across the parts);
- every ``{ref}`` label exists, and a text of its own names the labelled section or one that holds it,
  or the chapter it is in ("chapter 16");
- every markdown link to a file of the book exists, and its ``#anchor`` is a label or a heading there;
- every section title quoted after a ``{doc}`` link (``section "Which wavelengths?"``) is a heading of
  that chapter, as written;
- every link to code on GitHub, GitLab or the Hugging Face hub (``blob/``, ``tree/``, ``raw/``,
  ``resolve/``) is pinned to a commit or a release tag, not a branch (``main``, ``master``) whose
  file moves or disappears (issue 20: chapter 17's link to llama-models' ``reference_impl`` died).

``KNOWN_LINK_FINDINGS`` lists what was wrong when the check was written (issue 20), with the fix
expected; the test fails on anything else, and on a listed finding that is gone (remove it).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import nbformat
import pytest
import yaml
from prose_numbers import _MASKS, _blank, _mask_fences, _sub_blank

ROOT = Path(__file__).resolve().parents[1]


# ---- the book's documents, their numbers, headings and labels --------------------------------------
def toc_documents(toc: dict | None = None) -> list[tuple[str, int | None]]:
    """(document without suffix, chapter number or None) in reading order, from _toc.yml."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text()) if toc is None else toc
    docs, n = [(toc["root"], None)], 0
    for part in toc.get("parts", []):
        for ch in part.get("chapters", []):
            if part.get("numbered"):
                n += 1
            docs.append((ch["file"], n if part.get("numbered") else None))
    return docs


def source_path(doc: str) -> Path:
    return next(p for p in (ROOT / f"{doc}.ipynb", ROOT / f"{doc}.md") if p.exists())


def markdown_of(doc: str) -> list[tuple[str, str]]:
    """(where, markdown) of a document: each markdown cell of a notebook, or the whole page."""
    path = source_path(doc)
    if path.suffix == ".ipynb":
        nb = nbformat.read(path, as_version=4)
        return [(f"cell {i}", c.source) for i, c in enumerate(nb.cells) if c.cell_type == "markdown"]
    text = path.read_text()
    front = re.match(r"---\n.*?\n---\n", text, re.S)
    return [("", " " * front.end() + text[front.end() :] if front else text)]


# left to right, a role ({doc}`…`) or inline code (`…`), whichever starts first: a role inside code is code
ROLE_OR_CODE = re.compile(r"\{(?P<role>[\w:+-]+)\}`(?P<body>[^`]*)`|(?P<tick>`+)(?:(?!\n[ \t]*\n).)+?(?P=tick)", re.S)


def without_code(text: str) -> str:
    """``text`` with code blocks, inline code (not roles) and HTML comments blanked (same length)."""
    text = "\n".join(_mask_fences(text.split("\n")))
    text = ROLE_OR_CODE.sub(lambda m: m.group(0) if m.group("role") else _blank(m.group(0)), text)
    return _sub_blank(_MASKS[6][0], text)


HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)
LABEL = re.compile(r"^\(([\w.:-]+)\)=[ \t]*$", re.M)


@functools.cache
def sections(doc: str) -> tuple[list[tuple[int, str]], dict[str, list[str]]]:
    """(headings as (level, title) in order; label -> titles of the labelled section and of the
    sections that hold it, innermost first)."""
    heads, labels, stack, pending = [], {}, [], []
    for _where, md in markdown_of(doc):
        text = without_code(md)
        events = [(m.start(), "h", m) for m in HEADING.finditer(text)]
        events = sorted(events + [(m.start(), "l", m) for m in LABEL.finditer(text)], key=lambda e: e[0])
        for _pos, kind, m in events:
            if kind == "l":
                pending.append(m.group(1))
                continue
            level, title = len(m.group(1)), m.group(2)
            heads.append((level, title))
            stack = [s for s in stack if s[0] < level] + [(level, title)]
            for label in pending:
                labels[label] = [t for _lvl, t in reversed(stack)]
            pending = []
    return heads, labels


def normal(title: str) -> str:
    """A title as words: no markup, quotes, math delimiters, case or spacing."""
    t = re.sub(r"[*_`$\"“”‘’]|\\(?=[A-Za-z])", "", title)
    return " ".join(t.lower().split())


def names(title: str) -> set[str]:
    """The ways a link may name a heading: in full, or shortened to what precedes its colon or its
    first formula ("An experiment" for "An experiment: is the word still there, and the position?")."""
    short = {title.split(":")[0], title.split("$")[0]}
    return {normal(t) for t in (title, *short) if normal(t)}


POINTERS = {"below", "above", "here", "this section", "the next section"}  # words that name no title


def slug(title: str) -> str:
    return re.sub(r"[^\w]+", "-", normal(title)).strip("-")


# ---- the checks -------------------------------------------------------------------------------------
LINK = re.compile(r"(?<!!)\[(?P<text>[^\]]*)\]\((?P<target>[^()\s]+)(?:\s+\"[^\"]*\")?\)")
QUOTED = re.compile(r"^[,;:]?\s*sections?\s+(?P<titles>(?:(?:,\s*|\s+and\s+)?(?:\"[^\"]+\"|“[^”]+”))+)")
CHAPTER_N = re.compile(r"^chapter\s+(\d+)$", re.I)
URL = re.compile(r"https?://[^\s)\"'<>`\]]+")
CODE_URL = re.compile(
    r"https?://(?:(?:github\.com|gitlab\.com|huggingface\.co)/[^/\s]+/[^/\s]+(?:/-)?/(?:blob|tree|raw|blame|resolve)/"
    r"|raw\.githubusercontent\.com/[^/\s]+/[^/\s]+/)(?P<ref>[^/\s#?)]+)"
)
PINNED = re.compile(r"(?=[0-9a-f]*\d)[0-9a-f]{7,40}|v?\d+(?:\.\d+)+(?:[-.+]?\w+)*")  # a commit, or a tag: v4.57.6


def resolve(doc: str, target: str) -> str | None:
    """The document a ``{doc}`` target of ``doc`` names (relative to ``doc``'s folder, or absolute)."""
    base = Path(doc).parent
    name = target[1:] if target.startswith("/") else (base / target).as_posix()
    parts = []
    for p in name.split("/"):
        if p == "..":
            parts = parts[:-1]
        elif p not in ("", "."):
            parts.append(p)
    name = "/".join(parts)
    name = re.sub(r"\.(ipynb|md)$", "", name)
    return name if any((ROOT / f"{name}{s}").exists() for s in (".ipynb", ".md")) else None


def link_problems(doc: str, parts, numbers: dict[str, int | None], all_labels: dict) -> list[str]:
    """Every internal link of ``doc`` (its markdown ``parts``, (where, text)) that does not resolve
    or does not say where it goes."""
    out = []
    for where, md in parts:
        text = without_code(md)
        at = f"{where}: " if where else ""
        for m in ROLE_OR_CODE.finditer(text):
            if m.group("role") not in ("doc", "ref"):
                continue
            body = " ".join(m.group("body").split())
            words, target = (re.match(r"^(.*?)\s*<([^<>]+)>$", body) or re.match(r"^()(.*)$", body)).groups()
            if m.group("role") == "doc":
                name = resolve(doc, target)
                if name is None or name not in numbers:
                    out.append(f"{at}{{doc}}`{body}`: no document {target!r} in the table of contents")
                    continue
                n = CHAPTER_N.match(words)
                if n and int(n.group(1)) != numbers[name]:
                    out.append(f"{at}{{doc}}`{body}`: {target} is chapter {numbers[name]}")
                next_one = (numbers.get(doc) or 0) + 1
                if words.lower() in ("the next chapter", "next chapter") and numbers[name] != next_one:
                    out.append(f"{at}{{doc}}`{body}`: {target} is not the next chapter")
                q = QUOTED.match(text[m.end() :])
                if q:
                    titles = set().union(*(names(t) for _lvl, t in sections(name)[0]))
                    for quoted in re.findall(r"\"([^\"]+)\"|“([^”]+)”", q.group("titles")):
                        title = quoted[0] or quoted[1]
                        if normal(title) not in titles:
                            title = " ".join(title.split())
                            out.append(f"{at}{{doc}}`{body}`, section \"{title}\": no such heading in {target}")
            else:
                if target not in all_labels:
                    out.append(f"{at}{{ref}}`{body}`: no label ({target})= in the book")
                    continue
                where_doc, titles = all_labels[target]
                n = CHAPTER_N.match(words)
                if n and int(n.group(1)) != numbers.get(where_doc):
                    out.append(f"{at}{{ref}}`{body}`: ({target})= is in {where_doc}, chapter {numbers.get(where_doc)}")
                elif words and not n and normal(words) not in POINTERS | set().union(*map(names, titles)):
                    out.append(f"{at}{{ref}}`{body}`: the section is titled {titles[0]!r}")
        for m in LINK.finditer(text):
            target = m.group("target")
            if re.match(r"[a-z]+:", target) or target.startswith("#") and not target[1:]:
                continue
            path, _, anchor = target.partition("#")
            name = resolve(doc, path) if path else doc
            if name is None:
                out.append(f"{at}[{m.group('text')}]({target}): no file {path!r}")
            elif anchor:
                heads, labels = sections(name)
                if anchor not in labels and anchor not in {slug(t) for _lvl, t in heads}:
                    out.append(f"{at}[{m.group('text')}]({target}): no label or heading {anchor!r} in {name}")
    return out


def unpinned(text: str) -> list[str]:
    """The links to code in ``text`` that name a branch, not a commit or a tag."""
    code = [m for u in URL.finditer(text) if (m := CODE_URL.match(u.group(0)))]
    return [m.group(0) for m in code if not PINNED.fullmatch(m.group("ref"))]


DOCS = toc_documents()
NUMBERS = dict(DOCS)


@functools.cache
def every_label() -> dict[str, tuple[str, list[str]]]:
    out = {}
    for doc, _n in DOCS:
        for label, titles in sections(doc)[1].items():
            out[label] = (doc, titles)
    return out


# What was wrong when the check was written (issue 20): (document, a piece of the problem) -> the fix.
KNOWN_LINK_FINDINGS: dict[tuple[str, str], str] = {
}  # fmt: skip


def known(doc: str, problem: str):
    return next((k for k in KNOWN_LINK_FINDINGS if k[0] == doc and k[1] in problem), None)


def code_files() -> list[Path]:
    """Where else links to code are written: the library's docstrings, the tests, tools, README."""
    files = [*ROOT.glob("pe_lib/**/*.py"), *ROOT.glob("tests/**/*.py"), *ROOT.glob("tools/*.py"), ROOT / "README.md"]
    return sorted(p for p in files if "node_modules" not in p.parts and p.name != Path(__file__).name)


@functools.cache
def problems(doc: str) -> tuple[str, ...]:
    out = link_problems(doc, markdown_of(doc), NUMBERS, every_label())
    out += [f"unpinned link to code: {u}" for _w, md in markdown_of(doc) for u in unpinned(md)]
    return tuple(out)


@pytest.mark.parametrize("doc", [d for d, _n in DOCS], ids=lambda d: Path(d).name)
def test_links_resolve_say_where_they_go_and_code_is_pinned(doc):
    bad = [p for p in problems(doc) if not known(doc, p)]
    assert not bad, f"{doc}: {len(bad)} link problem(s)\n  " + "\n  ".join(bad)


def test_links_to_code_outside_the_book_are_pinned():
    bad = [f"{p.relative_to(ROOT)}: {u}" for p in code_files() for u in unpinned(p.read_text())]
    assert not bad, "pin these links to a commit or a tag:\n  " + "\n  ".join(bad)


def test_known_link_findings_are_still_there():
    gone = [f"{k}: {fix}" for k, fix in KNOWN_LINK_FINDINGS.items()
            if not any(known(k[0], p) == k for p in problems(k[0]))]  # fmt: skip
    assert not gone, "fixed or changed: remove from KNOWN_LINK_FINDINGS in tests/test_links.py\n  " + "\n  ".join(gone)


def test_the_table_of_contents_numbers_the_chapters_1_to_18():
    chapters = [d for d, n in DOCS if n is not None]
    assert [NUMBERS[d] for d in chapters] == list(range(1, len(chapters) + 1))
    assert all(Path(d).name.startswith(f"{NUMBERS[d]:02d}_") for d in chapters)  # the files' own numbers agree
    assert "book/notation" in NUMBERS and NUMBERS["book/notation"] is None


# ---- the check itself, on planted errors --------------------------------------------------------------
def planted(text: str, doc: str = "book/errata") -> list[str]:
    """link_problems of ``doc`` if its markdown were ``text``."""
    return link_problems(doc, [("", text)], NUMBERS, every_label())


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("See {doc}`chapter 4 <../notebooks/03_the_formula>`.", "is chapter 3"),
        ("See {doc}`chapter 3 <../notebooks/03_the_formul>`.", "no document"),
        ('See {doc}`chapter 3 <../notebooks/03_the_formula>`, section "Which wavelength?".', "no such heading"),
        ('See {doc}`chapter 8 <../notebooks/08_relative_positions>`, sections "A head that looks $k$ tokens back" '
         'and "Limits of the construction".', 'section "A head that looks $k$ tokens back"'),
        ("See {ref}`errata-no-such-label`.", "no label"),
        ("See {ref}`the wrong title <errata-misconceptions>`.", "the section is titled"),
        ("See {ref}`chapter 3 <errata-misconceptions>`.", "is in book/errata, chapter None"),
        ("See [the notation](notation.md#no-such-heading).", "no label or heading"),
        ("See [the notation](notatio.md).", "no file"),
    ],
)
def test_a_planted_broken_link_fails(text, problem):
    found = planted(text)
    assert len(found) == 1 and problem in found[0], found


def test_correct_links_pass():
    text = (
        'See {doc}`chapter 3 <../notebooks/03_the_formula>`, sections "Which wavelengths?" and '
        '"The first two positions", {ref}`common misconceptions <errata-misconceptions>`, '
        "{ref}`errata-misconceptions`, [sizes](notation.md#sizes) and [errata](#errata-misconceptions). "
        "`{doc}`chapter 9 <nothing>`` in code is not a link."
    )
    assert planted(text) == []


@pytest.mark.parametrize(
    ("url", "pinned"),
    [
        ("https://github.com/huggingface/transformers/blob/main/src/transformers/modeling_rope_utils.py", False),
        ("https://github.com/tensorflow/tensor2tensor/blob/master/tensor2tensor/layers/common_attention.py", False),
        ("https://github.com/meta-llama/llama-models/tree/main/models/llama3", False),
        ("https://raw.githubusercontent.com/microsoft/LongRoPE/main/x.csv", False),
        ("https://huggingface.co/Qwen/Qwen2-VL-7B-Instruct/blob/main/config.json", False),
        ("https://huggingface.co/Qwen/Qwen2-VL-7B-Instruct/blob/a7a06a1cc11b4514ce9edcde0e3ca1d16e5ff2fc/config.json",
         True),
        ("https://github.com/huggingface/transformers/blob/daccde143d646e4fec8d52cc870b8c7fd1d2581c/src/x.py#L1",
         True),
        ("https://github.com/huggingface/transformers/blob/v4.57.6/src/transformers/modeling_rope_utils.py", True),
        ("https://github.com/huggingface/diffusers/blob/v0.42.1/src/diffusers/models/embeddings.py", True),
        ("https://github.com/microsoft/LongRoPE/blob/892c104/x.csv", True),
        ("https://github.com/huggingface/transformers/issues/25104", True),  # not code: an issue
        ("https://github.com/jquesnelle/yarn", True),  # a project, not a file
    ],
)
def test_links_to_code_must_be_pinned(url, pinned):
    assert unpinned(f"see [the code]({url}) here") == ([] if pinned else [CODE_URL.match(url).group(0)])
