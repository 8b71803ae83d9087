"""A citation opens the work's entry in the bibliography, never another chapter's reference list.

Each chapter ends with the works it cites (a ``{bibliography}`` filtered to the page), and
sphinxcontrib-bibtex links a citation to the list on its own page. A page without such a list (the
introduction, the errata) got a link to the first chapter whose list had the work: "Vaswani et al.,
2017" on the home page opened the end of chapter 16 (issue 19, item 6). With ``bibtex_cite_id:
"cite-{key}"`` (``_config.yml``) every entry's anchor is ``cite-<key>``, and on the bibliography page,
which lists every work with the key prefix ``all-``, ``cite-all-<key>``. After references are resolved,
a citation that points into another page's list is pointed at the bibliography page instead.
"""

from __future__ import annotations

import re

from docutils import nodes

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


def setup(app):
    app.connect("doctree-resolved", citations_to_bibliography)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
