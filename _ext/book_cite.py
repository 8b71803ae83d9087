"""A citation opens the work's entry in the bibliography, never another chapter's reference list.

Each chapter ends with the works it cites (a ``{bibliography}`` filtered to the page), and
sphinxcontrib-bibtex links a citation to the list on its own page. A page without such a list (the
introduction, the errata) got a link to the first chapter whose list had the work: "Vaswani et al.,
2017" on the home page opened the end of chapter 16 (issue 19, item 6). With ``bibtex_cite_id:
"cite-{key}"`` (``_config.yml``) every entry's anchor is ``cite-<key>``, and on the bibliography page,
which lists every work with the key prefix ``all-``, ``cite-all-<key>``. After references are resolved,
a citation that points into another page's list is pointed at the bibliography page instead.

A reference list is labelled as the text cites (issue 30, item 4): the text says "[Su et al., 2021]",
and the list said "[SLP+21]" (pybtex's "alpha" labels). The style ``book`` (``bibtex_default_style``) is
pybtex's alpha style with author-year labels (:class:`AuthorYearLabels`), which the text prints too
(``bibtex_reference_style: label``): two works of one label get "a" and "b" in both places. book_site.css
highlights the entry a click on a citation opened (``:target``).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from docutils import nodes
from pybtex.plugin import register_plugin
from pybtex.richtext import Text
from pybtex.style.formatting.alpha import Style as AlphaStyle
from pybtex.style.labels import BaseLabelStyle

BIBLIOGRAPHY = "book/bibliography"
CITE_ANCHOR = re.compile(r"#cite-(?!all-)([A-Za-z0-9-]+)$")


def citations_to_bibliography(app, doctree, docname: str) -> None:
    if app.builder.format != "html" or docname == BIBLIOGRAPHY:
        return
    bibliography = app.builder.get_relative_uri(docname, BIBLIOGRAPHY)
    own = app.builder.get_relative_uri(docname, docname)
    for reference in doctree.findall(nodes.reference):
        match = CITE_ANCHOR.search(reference.get("refuri", ""))
        if match is None:
            continue
        page = reference["refuri"][: match.start()]
        if page in ("", own):
            continue  # the list at the end of this page
        reference["refuri"] = f"{bibliography}#cite-all-{match.group(1)}"


def _plain(latex: str) -> str:
    return Text.from_latex(latex).render_as("text")


def author_year(entry) -> str:
    """"Su et al., 2021", "Peebles and Xie, 2023", "Rush, 2018": as sphinxcontrib-bibtex's author_year
    citations read (last names of the authors, or else the editors; "et al." after the first of three or more)."""
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    last = [_plain(" ".join(p.prelast_names + p.last_names)) for p in people if str(p) != "others"]
    if not last:
        who = _plain(entry.fields.get("organization", entry.fields.get("title", entry.key)))
    elif len(last) == 1 and len(people) == 1:
        who = last[0]
    elif len(last) == 2 and len(people) == 2:
        who = f"{last[0]} and {last[1]}"
    else:
        who = f"{last[0]} et al."
    return f"{who}, {entry.fields.get('year', 'n.d.')}"


def labels_of(entries) -> dict[str, str]:
    """Each work's label (``{key: label}``) over the whole bibliography, ``entries`` in the .bib's order:
    :func:`author_year`, and for works that would share one, "a", "b", ... in that order
    ("Chi et al., 2023a", "Chi et al., 2023b")."""
    plain = {entry.key: author_year(entry) for entry in entries}
    shared = Counter(plain.values())
    seen: Counter = Counter()
    out = {}
    for key, label in plain.items():
        if shared[label] > 1:
            out[key] = f"{label}{'abcdefghijklmnopqrstuvwxyz'[seen[label]]}"
            seen[label] += 1
        else:
            out[key] = label
    return out


LABELS: dict[str, str] = {}  # every work of the book's .bib files (read_labels)


class AuthorYearLabels(BaseLabelStyle):
    """Labels of a reference list, as the text cites them (``bibtex_reference_style: label``)."""

    def format_labels(self, sorted_entries):
        for entry in sorted_entries:
            yield LABELS.get(entry.key) or author_year(entry)


def read_labels(app, config) -> None:
    """Fill :data:`LABELS` from the bibliography files (``bibtex_bibfiles``), once the configuration is read."""
    from pybtex.database import parse_file

    LABELS.clear()
    entries = []
    for name in config.bibtex_bibfiles:
        entries += parse_file(str(Path(app.srcdir) / name)).entries.values()
    LABELS.update(labels_of(entries))


class BookStyle(AlphaStyle):
    """pybtex's alpha style (sorted by author, year, title) with author-year labels."""

    default_label_style = AuthorYearLabels


def setup(app):
    register_plugin("pybtex.style.formatting", "book", BookStyle)
    app.connect("config-inited", read_labels)
    app.connect("doctree-resolved", citations_to_bibliography)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
