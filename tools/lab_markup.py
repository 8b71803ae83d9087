"""The book's Sphinx-only markup, shown resolved in JupyterLab: citations, glossary terms, cross-references.

jupyterlab-myst (2.7.0, the newest release) renders MyST in Lab but resolves no citation: its citation data
is always empty and it reads no ``.bib`` file, no ``myst.yml`` and no frontmatter ``bibliography``
(``src/myst.ts``: ``cite: { order: [], data: {} }``; ``src/transforms/citations.ts`` marks every
``{cite}`` an error, shown as "Citation Not Found"), and it resolves ``{term}``/``{ref}`` only against
targets in the same notebook (the glossary is ``book/glossary.md``). The website (Jupyter Book 1.x,
sphinxcontrib-bibtex) needs that markup unchanged.

So ``make lab`` serves the notebooks through ``tools/lab_contents.py``: when Lab opens a notebook,
its markdown cells reach Lab with

* ``{cite}`a,b``` as ``[Author et al., 2017](#cite-a)`` links in brackets, like the website's
  author-year citations, each pointing at its entry below;
* the chapter's ``{bibliography}`` directive as the list of the works the chapter cites, read from
  ``book/references.bib`` (each entry labelled ``(cite-key)=``, the website's anchors);
* ``{term}`x``` as a link to ``book/glossary.md`` around an ``{abbr}`` role whose title is the
  glossary's definition: hovering shows the definition, a click opens the glossary;
* ``{ref}`label``` as a link to the file that defines the label, with the fragment that makes Lab
  scroll there: ``#cell-id=<id of the cell holding the label>`` for a notebook (JupyterLab 4's
  ``Notebook.setFragment`` scrolls the cell with that id to the top; jupyterlab-myst gives headings
  the label as ``id``, but Lab's other fragment forms look for ``data-jupyter-id``, which only Lab's
  own markdown renderer sets), ``#label`` for a page under book/ (opened in Lab's Markdown Preview, by
  tools/lab_settings/overrides.json). Lab applies a fragment before jupyterlab-myst has rendered the
  file, and jupyterlab-myst's page renderer ignores fragments, so tools/lab_extensions/book-lab-links
  scrolls there once the file has rendered. The role itself rides in the link's title, which
  jupyterlab-myst does not show, so saving can restore it.

Saving maps every such form back (:func:`from_lab`), so the file on disk keeps the book's markup; the
two maps are inverse on every chapter (tests/test_lab_notebooks.py). Nothing here needs a network.

The glossary page itself reaches Lab with its ``{glossary}`` directive as a MyST definition list
(:func:`glossary_to_lab`): jupyterlab-myst runs each term into its definition in one paragraph, but
draws a definition list as terms in bold above their definitions. :func:`glossary_from_lab` maps it back.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from functools import cache
from pathlib import Path
from urllib.parse import quote, unquote

ROOT = Path(__file__).resolve().parents[1]
BIB = ROOT / "book" / "references.bib"
GLOSSARY = ROOT / "book" / "glossary.md"

CITE = re.compile(r"\{cite\}`([^`]+)`")
TERM = re.compile(r"\{term\}`([^`]+)`([^\W\d_]*)")  # and the letters glued to its end: a plural's "s"
REF = re.compile(r"\{ref\}`([^`]+)`")
EXPLICIT = re.compile(r"^(.*?)\s*<([^<>]+)>$", re.S)  # ``text <target>``
BIBLIOGRAPHY = re.compile(r"```\{bibliography\}[^`]*```")
LABEL = re.compile(r"^\(([\w-]+)\)=\s*\n+(?:#+ *)?([^\n]*)", re.M)  # a label and the title under it

# what Lab receives, and what from_lab reads back
LAB_CITE_GROUP = re.compile(r"\\\[((?:\[[^\]]+\]\(#cite-[^)\s]+\)(?:; )?)+)\\\]")
LAB_CITE_KEY = re.compile(r"\]\(#cite-([^)\s]+)\)")
LAB_LINK = re.compile(r"\[(\{abbr\}`[^`]*`|[^\]]*)\]\((?:[^)#\s]*)#(term|ref)([:=])([^)\s]+)\)")
LAB_REF = re.compile(r'\[([^\]]*)\]\([^)#\s]*#[^)\s"]* "(ref)([:=])([^"\s]+)"\)')  # the role in the title
LAB_BIB = re.compile(r"^% lab-bibliography (.*?)\n.*?^% /lab-bibliography$", re.S | re.M)  # MyST comments


# ---- what the book defines -------------------------------------------------------------------------------
ACCENTS = {"`": "\u0300", "'": "\u0301", "^": "\u0302", "~": "\u0303", '"': "\u0308", "=": "\u0304",
           ".": "\u0307", "u": "\u0306", "v": "\u030c", "H": "\u030b", "c": "\u0327"}
LETTERS = {"L": "Ł", "l": "ł", "o": "ø", "O": "Ø", "ss": "ß", "ae": "æ", "AE": "Æ", "aa": "å", "i": "ı", "&": "&"}
ACCENT = re.compile(r"\\([`'^~\"=.]|[uvHc](?=[{\s]))\s*\{?([A-Za-z])\}?")
LETTER = re.compile(r"\\(ss|ae|AE|aa|[LloOi&])(?![A-Za-z])")


def _latex_text(value: str) -> str:
    """A BibTeX field as plain text: accents (``{\\v{c}}``, ``{\\'e}``) and ``\\L``, ``\\&``, ``--`` written
    as the characters they stand for, braces dropped."""
    value = ACCENT.sub(lambda m: unicodedata.normalize("NFC", m.group(2) + ACCENTS[m.group(1)]), value)
    value = LETTER.sub(lambda m: LETTERS[m.group(1)], value).replace("--", "–")
    return re.sub(r"[{}]", "", value).strip()


@cache
def bibliography(path: Path = BIB) -> dict[str, dict[str, str]]:
    """Each key of the .bib: its author-year label (as the website prints it) and a one-line entry."""
    from pybtex.database import parse_file  # installed with sphinxcontrib-bibtex

    works = {}
    for key, entry in parse_file(str(path)).entries.items():
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        people = [p for p in people if str(p) != "others"]  # "and others": the list goes on
        last = [_latex_text(" ".join(p.prelast_names + p.last_names)) for p in people]
        year = entry.fields.get("year", "n.d.")
        if not last:
            who = _latex_text(entry.fields.get("organization", entry.fields.get("title", key)))
        elif len(last) == 1:
            who = last[0]
        elif len(last) == 2:
            who = f"{last[0]} and {last[1]}"
        else:
            who = f"{last[0]} et al."
        names = ", ".join(_latex_text(" ".join(p.first_names + p.middle_names + p.prelast_names + p.last_names))
                          for p in people) + (" et al." if len(people) < len(entry.persons.get("author", [])) else "")
        where = entry.fields.get("booktitle") or entry.fields.get("journal") or entry.fields.get("publisher", "")
        parts = [names, _latex_text(entry.fields.get("title", "")), _latex_text(where)]
        if entry.fields.get("eprint"):
            parts.append(f"arXiv:{entry.fields['eprint']}")
        if entry.fields.get("url"):
            parts.append(entry.fields["url"])
        parts = [p for p in parts if p]
        text = " ".join([p if p[-1] in ".?!" else p + "." for p in parts[:-1]] + parts[-1:]) + f" ({year})."
        works[key] = {"label": f"{who}, {year}", "entry": text}
    # two works of one label: "a", "b" in the .bib's order, as the website labels them (_ext/book_cite.py)
    shared = Counter(w["label"] for w in works.values())
    seen: Counter = Counter()
    for work in works.values():
        if shared[work["label"]] > 1:
            label = work["label"]
            work["label"] = f"{label}{'abcdefghijklmnopqrstuvwxyz'[seen[label]]}"
            seen[label] += 1
    return works


@cache
def glossary(path: Path = GLOSSARY) -> dict[str, str]:
    """Glossary term (lower case) -> its definition as one line of plain text."""
    body = re.search(r"```\{glossary\}\n(.*?)\n```", path.read_text(encoding="utf-8"), re.S).group(1)
    terms, current = {}, []
    for line in body.splitlines():
        if line and not line[0].isspace():
            current = [line.strip().lower()]
            terms[current[0]] = ""
        elif line.strip() and current:
            terms[current[0]] = (terms[current[0]] + " " + line.strip()).strip()
    return terms


@cache
def labels(root: Path = ROOT) -> dict[str, tuple[str, str, str | None]]:
    """Every ``(label)=`` of the book's pages and chapters -> (its file from the repository root, its title,
    the id of the notebook cell that holds it; None on a page)."""
    found = {}
    for page in sorted((root / "book").glob("*.md")):
        for name, title in LABEL.findall(page.read_text(encoding="utf-8")):
            found[name] = (page.relative_to(root).as_posix(), title.strip(), None)
    for notebook in sorted((root / "notebooks").glob("*.ipynb")):
        for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "markdown":
                for name, title in LABEL.findall("".join(cell["source"])):
                    found[name] = (notebook.relative_to(root).as_posix(), title.strip(), cell.get("id"))
    return found


# ---- the two maps ----------------------------------------------------------------------------------------
def _split(role: str) -> tuple[str | None, str]:
    """``text <target>`` -> (text, target); ``target`` -> (None, target)."""
    m = EXPLICIT.match(role)
    return (m.group(1), m.group(2)) if m else (None, role)


def _cite(match: re.Match) -> str:
    works = bibliography()
    keys = match.group(1).split(",")
    unknown = [k for k in keys if k not in works]
    if unknown:
        raise ValueError(f"{{cite}} of {unknown}: not in {BIB.name} (keys there: {len(works)})")
    return r"\[" + "; ".join(f"[{works[k]['label']}](#cite-{k})" for k in keys) + r"\]"


def _term(match: re.Match) -> str:
    """``{term}`x``` as a link; ``{term}`x`s`` (a plural) links the whole word "xs", and keeps its ending after
    a backtick in the link's fragment (``#term:x%60s``), so that saving writes ``{term}`x`s`` back (issue 30,
    item 8: the link covered "wavelength" but not the plural's "s")."""
    text, target = _split(match.group(1))
    ending = match.group(2)
    definition = glossary().get(target.lower())
    if definition is None:
        raise ValueError(f"{{term}} {target!r}: not in {GLOSSARY.name} (terms there: {len(glossary())})")
    kind = ":" if text is None else "="
    # {abbr}`text (title)` takes its title from the last parentheses: the definition's own become brackets
    title = definition.replace("$", "").replace("`", "'").replace("(", "[").replace(")", "]")
    role = match.group(1) + (f"`{ending}" if ending else "")
    return f"[{{abbr}}`{text or target}{ending} ({title})`](../book/glossary.md#term{kind}{quote(role)})"


def _ref(match: re.Match, here: str) -> str:
    text, target = _split(match.group(1))
    if target not in labels():
        raise ValueError(f"{{ref}} {target!r}: no (label)= defines it in book/ or notebooks/")
    where, title, cell = labels()[target]
    path = Path(where).name if Path(where).parent == Path(here).parent else f"../{where}"
    fragment = f"cell-id={cell}" if cell else target
    kind = ":" if text is None else "="
    return f'[{text or title}]({path}#{fragment} "ref{kind}{quote(match.group(1))}")'


def _references(directive: str, keys: list[str]) -> str:
    works = bibliography()
    entries = [f"({'cite-' + k})=\n**{works[k]['label']}.** {works[k]['entry']}" for k in keys]
    return f"% lab-bibliography {json.dumps(directive)}\n" + "\n\n".join(entries) + "\n\n% /lab-bibliography"


def to_lab(sources: list[str], here: str = "notebooks/x.ipynb") -> list[str]:
    """A notebook's markdown cells as Lab receives them (see the module's docstring).

    ``here`` is the notebook's path from the repository root (for links to other files). The
    ``{bibliography}`` cell lists the works cited in any cell, in order of first citation.
    """
    cited = list(dict.fromkeys(k for s in sources for m in CITE.finditer(s) for k in m.group(1).split(",")))
    out = []
    for s in sources:
        s = CITE.sub(_cite, s)
        s = TERM.sub(_term, s)
        s = REF.sub(lambda m: _ref(m, here), s)
        s = BIBLIOGRAPHY.sub(lambda m: _references(m.group(0), cited), s)
        out.append(s)
    return out


def _back(match: re.Match) -> str:
    text, role, kind, quoted = match.groups()
    target, _, ending = unquote(quoted).partition("`")  # a plural's ending follows a backtick (_term)
    return f"{{{role}}}`{target}`{ending}"  # the role's own text (``text <target>`` when it had one)


def from_lab(source: str) -> str:
    """The inverse of :func:`to_lab` on one markdown cell: the book's markup back from Lab's form."""
    source = LAB_BIB.sub(lambda m: json.loads(m.group(1)), source)
    source = LAB_CITE_GROUP.sub(lambda m: "{cite}`" + ",".join(LAB_CITE_KEY.findall(m.group(1))) + "`", source)
    return LAB_LINK.sub(_back, LAB_REF.sub(_back, source))


# ---- the glossary page ----------------------------------------------------------------------------------
GLOSSARY_BLOCK = re.compile(r"^(```\{glossary\}[^\n]*)\n(.*?)\n```$", re.S | re.M)
LAB_GLOSSARY = re.compile(r"^% lab-glossary (.*?)\n(.*?)\n% /lab-glossary$", re.S | re.M)


def glossary_to_lab(text: str) -> str:
    """book/glossary.md as Lab receives it: the ``{glossary}`` block as a definition list (each term's first
    definition line starts with ``: `` instead of two spaces), between MyST comments that keep the fence."""
    def deflist(m: re.Match) -> str:
        lines = m.group(2).split("\n")
        terms = [bool(line) and not line[0].isspace() for line in lines]
        for i in range(1, len(lines)):
            if terms[i - 1] and lines[i].startswith("  ") and not lines[i][2:3].isspace():
                lines[i] = ": " + lines[i][2:]
        return f"% lab-glossary {json.dumps(m.group(1))}\n" + "\n".join(lines) + "\n% /lab-glossary"

    return GLOSSARY_BLOCK.sub(deflist, text)


def glossary_from_lab(text: str) -> str:
    """The inverse of :func:`glossary_to_lab`: the ``{glossary}`` directive back from the definition list."""
    def directive(m: re.Match) -> str:
        lines = m.group(2).split("\n")
        terms = [bool(line) and not line[0].isspace() and not line.startswith(": ") for line in lines]
        for i in range(1, len(lines)):
            if terms[i - 1] and lines[i].startswith(": "):
                lines[i] = "  " + lines[i][2:]
        return json.loads(m.group(1)) + "\n" + "\n".join(lines) + "\n```"

    return LAB_GLOSSARY.sub(directive, text)
