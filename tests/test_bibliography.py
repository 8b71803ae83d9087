"""Every work in the bibliography links to its source: a DOI, an arXiv identifier or a URL."""

import re
from pathlib import Path

import pytest
from pybtex.database import parse_file

ROOT = Path(__file__).resolve().parents[1]
ENTRIES = parse_file(ROOT / "book" / "references.bib").entries


def link_problems(fields) -> list[str]:
    """What is missing or malformed in the link fields of one entry (empty if it links to its source)."""
    problems = []
    doi, eprint, url = fields.get("doi"), fields.get("eprint"), fields.get("url")
    if not (doi or eprint or url):
        problems.append("no doi, eprint (arXiv) or url")
    if doi and not re.fullmatch(r"10\.\d{4,9}/\S+", doi):
        problems.append(f"doi {doi!r} is not of the form 10.NNNN/...")
    if eprint and (fields.get("archiveprefix", "").lower() != "arxiv" or not re.fullmatch(r"\d{4}\.\d{4,5}", eprint)):
        problems.append(f"eprint {eprint!r} needs archiveprefix = {{arXiv}} and a new-style arXiv id")
    if url and not url.startswith("https://"):
        problems.append(f"url {url!r} is not an https address")
    if re.search(r"arXiv:\d", fields.get("note", "") + fields.get("journal", "")):
        problems.append("an arXiv id in note or journal: put it in eprint, where it becomes a link")
    return problems


@pytest.mark.parametrize("key", sorted(ENTRIES))
def test_every_entry_links_to_its_source(key):
    assert not link_problems(ENTRIES[key].fields), f"{key}: {link_problems(ENTRIES[key].fields)}"


def test_the_check_can_fail():
    assert link_problems({"title": "A paper"}) == ["no doi, eprint (arXiv) or url"]
    assert link_problems({"eprint": "1706.03762"}) != []  # no archiveprefix
    assert link_problems({"doi": "doi:10.1/x"}) != []
    assert link_problems({"url": "http://example.org"}) != []
    assert link_problems({"url": "https://example.org", "note": "arXiv:1706.03762"}) != []
    assert link_problems({"eprint": "1706.03762", "archiveprefix": "arXiv", "doi": "10.18653/v1/N18-2074"}) == []
