"""What a learner sees in JupyterLab: collapsed solutions, a friendly widget stand-in, a locked environment.

JupyterLab ignores Jupyter Book's ``hide-input``/``hide-output`` tags, so ``tools/execute.py`` mirrors
them into ``jupyter.source_hidden``/``outputs_hidden``; these tests check every stored notebook.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import importlib.util
import json
import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

_spec = importlib.util.spec_from_file_location("execute", ROOT / "tools" / "execute.py")
execute = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(execute)



def _run(coroutine):
    """``asyncio.run`` in a thread of its own: a Playwright page opened earlier in the same pytest process
    (tests/browser/test_lab.py) leaves an event loop running in this thread, where asyncio.run refuses."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_hidden_in_the_book_means_collapsed_in_lab(path):
    nb = nbformat.read(path, as_version=4)
    wrong = []
    for i, cell in enumerate(nb.cells):
        tags = cell.metadata.get("tags", [])
        lab = cell.metadata.get("jupyter", {})
        for tag, flag in execute.LAB_FLAGS.items():
            if (tag in tags) != bool(lab.get(flag, False)):
                state = "set" if tag in tags else "absent"
                wrong.append(f"cell {i}: tag {tag!r} {state}, jupyter.{flag}={lab.get(flag)}")
        if ("hide-output" in tags) != cell.metadata.get("collapsed", False):  # what Lab writes when it saves
            wrong.append(f"cell {i}: hide-output {'hide-output' in tags}, collapsed={cell.metadata.get('collapsed')}")
    assert not wrong, f"{path.name}: run `make execute` to mirror the tags into Lab's metadata:\n" + "\n".join(wrong)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_widget_outputs_say_how_to_get_the_sliders(path):
    nb = nbformat.read(path, as_version=4)
    texts = [
        out["data"].get("text/plain")
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if WIDGET_MIME in out.get("data", {})
    ]
    assert all(t == execute.WIDGET_STAND_IN for t in texts), texts


def test_lab_collapse_sets_and_clears_the_flags():
    cell = nbformat.v4.new_code_cell("x", metadata={"tags": ["hide-input", "hide-output"]})
    execute._lab_collapse(cell)
    assert cell.metadata["jupyter"] == {"source_hidden": True, "outputs_hidden": True}
    assert cell.metadata["collapsed"] is True
    cell.metadata["tags"] = ["hide-input"]
    execute._lab_collapse(cell)
    assert cell.metadata["jupyter"] == {"source_hidden": True} and "collapsed" not in cell.metadata
    cell.metadata["tags"] = []
    execute._lab_collapse(cell)
    assert "jupyter" not in cell.metadata


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==([^\s;]+)", line)
        assert m, f"{path.name}: {raw!r} is not pinned as name==version"
        pins[re.sub(r"[-_.]+", "-", m.group(1)).lower()] = m.group(3)
    return pins


def test_the_lab_environment_is_locked_beside_the_book_environment():
    book = _pins(ROOT / "requirements.txt")
    lab = _pins(ROOT / "requirements-lab.txt")
    assert {"jupyterlab", "jupyterlab-myst", "jupyter-server", "notebook-shim"} <= set(lab), sorted(lab)
    clashes = {name: (book[name], v) for name, v in lab.items() if name in book and book[name] != v}
    assert not clashes, f"pinned differently in requirements.txt and requirements-lab.txt: {clashes}"
    assert len(lab) >= 30, f"only {len(lab)} pins: the lab lock must pin JupyterLab's whole dependency closure"


# JupyterLab opens a link only if it names the file: {doc}`chapter 2 <02_why_add>` becomes a link to
# notebooks/02_why_add, a 404 (issue 19, item 4). Chapters link with [chapter 2](02_why_add.ipynb),
# which the website resolves as well. A folded solution shows its first line in Lab, so that line
# names the solution and no more (item 5). Chapters 14-16 are being rewritten on another branch,
# which takes both changes over (xfail until then).
DOC_ROLE = re.compile(r"\{doc\}`[^`]*`")
SOLUTION_FIRST_LINE = re.compile(r"^# Solution \d+[a-z]?$")
LATER: set[str] = set()


def _params():
    return [pytest.param(p, marks=pytest.mark.xfail(strict=True, reason="chapter rewritten on another branch"))
            if p.name in LATER else p for p in NOTEBOOKS]


@pytest.mark.parametrize("path", _params(), ids=lambda p: p.name)
def test_links_and_folded_solutions_work_in_lab(path):
    nb = nbformat.read(path, as_version=4)
    problems = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            problems += [f"cell {i}: {m.group(0)} (write [text](file.ipynb))" for m in DOC_ROLE.finditer(cell.source)]
            for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", cell.source):
                if "://" not in target and not (path.parent / target).is_file():
                    problems.append(f"cell {i}: link to {target}, which is no file")
        tags = cell.metadata.get("tags", [])
        if cell.cell_type == "code" and cell.source.startswith("# Solution"):  # an exercise's solution
            first = cell.source.splitlines()[0]
            if not SOLUTION_FIRST_LINE.match(first):
                problems.append(f"cell {i}: its first line, shown folded in Lab, says more: {first[:70]!r}")
            missing = [tag for tag in ("hide-input", "hide-output") if tag not in tags]
            if missing:
                problems.append(f"cell {i}: a solution without the tags {missing} (its code or answer shows)")
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


# ---- issue 19, item 3: citations, terms and references resolved in Lab (tools/lab_markup.py) -------------
# jupyterlab-myst 2.7.0 resolves no {cite} ("Citation Not Found") and no {term} defined in another file;
# `make lab` serves the chapters through tools/lab_contents.py, which hands Lab the resolved form and
# saves the book's markup back. Expected values below are written from references.bib and glossary.md.
sys.path.insert(0, str(ROOT / "tools"))
lab_markup = importlib.import_module("lab_markup")
ROLE = re.compile(r"\{(cite|term|ref|doc)\}`|```\{bibliography\}")


def _markdown(path: Path) -> list[str]:
    return [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown"]


def test_citations_read_author_year_and_point_at_their_entry():
    one, two, many = lab_markup.to_lab(["{cite}`kazemnejad2019pencoding`", "{cite}`alain2016probes`",
                                        "as {cite}`vaswani2017attention,haviv2022nope`."])
    assert one == r"\[[Kazemnejad, 2019](#cite-kazemnejad2019pencoding)\]"
    assert two == r"\[[Alain and Bengio, 2016](#cite-alain2016probes)\]"
    assert many == (r"as \[[Vaswani et al., 2017](#cite-vaswani2017attention); "
                    r"[Haviv et al., 2022](#cite-haviv2022nope)\].")


def test_two_works_of_one_label_are_told_apart_as_on_the_website():
    """Chi et al. wrote two papers in 2023: Lab labels them "a" and "b" in the .bib's order, as the site's
    reference lists and citations do (_ext/book_cite.py; issue 30, item 4)."""
    works = lab_markup.bibliography()
    assert works["chi2023dissecting"]["label"] == "Chi et al., 2023a"
    assert works["chi2023variance"]["label"] == "Chi et al., 2023b"
    assert len({w["label"] for w in works.values()}) == len(works)


def test_names_with_accents_particles_and_others_read_as_written():
    works = lab_markup.bibliography()
    assert works["roziere2023codellama"]["label"] == "Rozière et al., 2023"
    assert works["vonplaten2022diffusers"]["label"] == "von Platen et al., 2022"
    assert "Petar Veličković. Round and Round We Go!" in works["barbero2024rope"]["entry"]
    assert "Jingyu Liu et al. Code Llama" in works["roziere2023codellama"]["entry"]  # "and others"
    assert not [k for k, w in works.items() if re.search(r"[\\{}]|\.\.", w["label"] + w["entry"])]


def test_the_references_cell_lists_what_the_chapter_cites_in_order():
    directive = "```{bibliography}\n:filter: docname in docnames\n```"
    _, refs = lab_markup.to_lab(["{cite}`press2022alibi` then {cite}`vaswani2017attention,press2022alibi`",
                                 f"## References\n\n{directive}"])
    labels = re.findall(r"^\(cite-(\w+)\)=\n\*\*([^*]+)\*\* (.*)$", refs, re.M)
    assert [(k, who) for k, who, _ in labels] == [("press2022alibi", "Press et al., 2022."),
                                                  ("vaswani2017attention", "Vaswani et al., 2017.")]
    assert "Attention Is All You Need" in labels[1][2] and "Łukasz Kaiser" in labels[1][2]
    assert directive not in refs.replace(json.dumps(directive), "")  # only inside the marker, for saving


def test_terms_and_references_become_links_to_their_files():
    term, named = lab_markup.to_lab(["{term}`self-attention`",
                                     "{term}`Position interpolation <position interpolation>`"])
    (ref,) = lab_markup.to_lab(["{ref}`common misconceptions <errata-rope-values>`"], "notebooks/12_rope.ipynb")
    # an {abbr} (the definition on hover) inside a link to the glossary (a click opens it)
    assert term == ("[{abbr}`self-attention (The layer in which every token's query is compared with every token's "
                    "key; the softmax of these scores weights a sum of value vectors.)`]"
                    "(../book/glossary.md#term:self-attention)")
    assert named.startswith("[{abbr}`Position interpolation (")
    assert named.endswith(")`](../book/glossary.md#term=Position%20interpolation%20%3Cposition%20interpolation%3E)")
    # a plural: the link covers the whole word, and saving writes the role and its ending back (issue 30)
    (plural,) = lab_markup.to_lab(["the {term}`wavelength`s, and"])
    assert plural.startswith("the [{abbr}`wavelengths (")
    assert plural.endswith(")`](../book/glossary.md#term:wavelength%60s), and")
    assert lab_markup.from_lab(plural) == "the {term}`wavelength`s, and"
    (pair,) = lab_markup.to_lab(["{term}`pair index`"])  # its definition has parentheses and math
    assert "[the paper's i]" in pair and "$" not in pair
    assert ref == ('[common misconceptions](../book/errata.md#errata-rope-values '
                   '"ref=common%20misconceptions%20%3Cerrata-rope-values%3E")')


def test_a_reference_to_a_chapter_names_the_cell_that_holds_its_label():
    """JupyterLab 4 scrolls a notebook to ``#cell-id=<id>`` (Notebook.setFragment); a bare ``#label`` finds
    nothing there, since jupyterlab-myst's headings carry no ``data-jupyter-id``. The ids are the stored ones."""
    chapter = nbformat.read(ROOT / "notebooks" / "16_what_was_learned.ipynb", as_version=4)
    cells = {c.id: c.source for c in chapter.cells}
    other, same = lab_markup.to_lab(["{ref}`Chapter 16 <trained-four-terms>`", "{ref}`trained-commuting`"],
                                    "notebooks/02_why_add.ipynb")
    four = re.fullmatch(r'\[Chapter 16\]\(16_what_was_learned\.ipynb#cell-id=([\w-]+) "ref=[^"]+"\)', other)
    assert four and cells[four.group(1)].startswith("(trained-four-terms)=\n## 2. Inside the score")
    commuting = re.fullmatch(r"\[How close to chapter 6's shift-commuting heads\?\]"
                             r'\(16_what_was_learned\.ipynb#cell-id=([\w-]+) "ref:trained-commuting"\)', same)
    assert commuting and "\n(trained-commuting)=\n" in cells[commuting.group(1)]
    assert [lab_markup.from_lab(s) for s in (other, same)] == ["{ref}`Chapter 16 <trained-four-terms>`",
                                                              "{ref}`trained-commuting`"]


@pytest.mark.parametrize("markup", ["{cite}`nosuchkey2099`", "{term}`no such term`", "{ref}`no-such-label`"])
def test_unknown_targets_are_refused_with_the_name(markup):
    with pytest.raises(ValueError, match="no.such|nosuchkey2099"):
        lab_markup.to_lab([markup])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_lab_sees_no_book_markup_and_saving_restores_it(path):
    sources = _markdown(path)
    lab = lab_markup.to_lab(sources, path.relative_to(ROOT).as_posix())
    left = [ROLE.search(s.split("% lab-bibliography", 1)[0]).group(0) for s in lab
            if ROLE.search(s.split("% lab-bibliography", 1)[0])]
    assert not left, f"{path.name}: Lab would still receive {left}"
    assert any("(cite-" in s for s in lab), f"{path.name}: its References cell lists nothing in Lab"
    assert [lab_markup.from_lab(s) for s in lab] == sources


def test_the_lab_file_manager_serves_resolved_chapters_and_saves_the_book_markup(tmp_path):
    pytest.importorskip("jupyter_server")
    lab_contents = importlib.import_module("lab_contents")
    chapter = NOTEBOOKS[0]
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / chapter.name).write_bytes(chapter.read_bytes())
    manager = lab_contents.BookContentsManager(root_dir=str(tmp_path))
    path = f"notebooks/{chapter.name}"
    model = _run(manager.get(path))
    text = json.dumps(model["content"])
    assert "{cite}" not in text and "(#cite-vaswani2017attention)" in text
    # what the kernel will report, so that Lab does not mark the chapter unsaved when it starts
    from ipykernel.ipkernel import IPythonKernel
    assert model["content"]["metadata"]["language_info"]["version"] == IPythonKernel.language_info["version"]
    _run(manager.save({"type": "notebook", "content": model["content"]}, path))
    saved = tmp_path / "notebooks" / chapter.name
    assert _markdown(saved) == _markdown(chapter)
    assert (json.loads(saved.read_text())["metadata"]["language_info"]
            == json.loads(chapter.read_text())["metadata"]["language_info"])  # the version on disk is kept


def test_the_glossary_reaches_lab_as_a_definition_list_and_is_saved_as_the_directive(tmp_path):
    """jupyterlab-myst runs a {glossary} entry's term into its definition; a definition list shows the term
    above it. Written by hand: the first two entries of book/glossary.md in both forms."""
    book = (ROOT / "book" / "glossary.md").read_text(encoding="utf-8")
    lab = lab_markup.glossary_to_lab(book)
    assert lab.startswith('# Glossary\n\n% lab-glossary "```{glossary}"\nabsolute position\n'
                          ": The index of a token counted from the start of the sequence. The sinusoidal encoding "
                          "and learned\n  position tables encode absolute positions; attention can still recover "
                          "relative ones from them.\n\nrelative position\n: The offset between two tokens")
    assert lab.count("```") == 1 and lab.endswith("% /lab-glossary\n")  # the fence only in the comment
    assert lab.count("\n: ") == len(lab_markup.glossary()) >= 40  # one per term
    assert lab_markup.glossary_from_lab(lab) == book
    pytest.importorskip("jupyter_server")
    lab_contents = importlib.import_module("lab_contents")
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "glossary.md").write_text(book, encoding="utf-8")
    (tmp_path / "book" / "other.md").write_text("term\n  text\n", encoding="utf-8")
    manager = lab_contents.BookContentsManager(root_dir=str(tmp_path))
    model = _run(manager.get("book/glossary.md"))
    assert model["content"] == lab
    _run(manager.save({"type": "file", "format": "text", "content": lab}, "book/glossary.md"))
    assert (tmp_path / "book" / "glossary.md").read_text(encoding="utf-8") == book
    assert _run(manager.get("book/other.md"))["content"] == "term\n  text\n"  # only the glossary


# ---- issue 19, item 15: a chapter opens in Lab without being marked unsaved ---------------------------
# When its kernel starts, Lab writes the kernel's language_info into the notebook; any difference from the
# stored one (it had no "version") marks the notebook unsaved before the learner touched it.
def _kernel_language_info() -> dict:
    from ipykernel.ipkernel import IPythonKernel  # what the book's kernel reports

    return dict(IPythonKernel.language_info)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_language_info_is_what_the_kernel_reports(path):
    stored = nbformat.read(path, as_version=4).metadata["language_info"]
    kernel = _kernel_language_info()
    assert re.fullmatch(r"\d+\.\d+\.\d+", stored.get("version", "")), (
        f"{path.name}: language_info has no Python version ({stored}); "
        "run `python tools/execute.py --metadata-only notebooks/*.ipynb`")
    assert {k: v for k, v in stored.items() if k != "version"} == {k: v for k, v in kernel.items() if k != "version"}


def test_execute_stores_the_version_of_the_python_that_ran_it():
    without_version = {k: v for k, v in _kernel_language_info().items() if k != "version"}  # as stored before
    nb = nbformat.v4.new_notebook(metadata={"language_info": without_version})
    execute._clean(nb)
    assert nb.metadata["language_info"] == _kernel_language_info()
