"""Every figure in a chapter comes from ``pe_lib.show``, so that nbval sees its data and readers its alt text.

nbval never compares pixels: a wrong plot passes it unless the output also carries text that changes
with the drawn data. ``pe_lib.show`` (pe_lib/figures.py) stores that text, a digest starting with
"Figure data", beside the PNG, and the alt text in the output metadata; ``tools/execute.py`` copies the
alt text into the cell's ``mystnb.image.alt``, where the site's ``<img alt>`` comes from. For every
image output of every notebook this test requires:

* a ``text/plain`` digest starting with "Figure data" in the same output, whose size matches;
* ``alt`` in the output metadata, equal to the cell metadata's ``mystnb.image.alt``: at least 4 words,
  not a file name;
* a width of at most 760 CSS pixels (the text column) in the metadata, and a PNG of twice that size;
* one figure per cell;
* no legend over the data: ``legend_over_data`` in the metadata (what ``pe_lib.show`` found a legend
  covering, from the drawn artists; issue 30, item 3) is empty. Outputs stored before it existed lack it;
* no tick between whole numbers on an axis whose data are whole numbers (positions, offsets, counts):
  ``ticks_off_integers`` in the metadata and in its phone rendering's (``pe_lib.book.figures``, from the
  drawn ticks and artists; issue 30: Fig. 4.8's x ticks at 2.5, 7.5) is empty. Outputs stored before it
  existed lack it.

Another wants every figure captioned with its finding (``caption`` in the metadata; issue 30, item 6: the
site's captions repeated the alt text), except in the chapters listed in ``CAPTIONS_PENDING``.

A separate test wants every figure, as a phone shows it (its phone rendering, or the figure itself),
at most ``PHONE_MAX_HEIGHT`` CSS px tall: a 390 x 844 phone shows it whole with the browser's bars
and the start of its caption (issue 30, item 7: stacked panels 800-1100 px tall). The figures still
taller are listed in ``TOO_TALL_ON_A_PHONE``, each one to be redrawn; the test fails on a new one and
on a listed one that fits.
"""

from __future__ import annotations

import base64
import io
import re
import sys
from pathlib import Path
from unittest import mock

import matplotlib

matplotlib.use("Agg")
import nbformat  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import pe_lib  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
MAX_WIDTH = 760  # CSS pixels: the book's text column (pe_lib.book.figures.MAX_WIDTH_PX, restated on purpose)
FILE_NAME = re.compile(r"\.(png|svg|jpe?g|gif|pdf|webp)\W*$", re.I)


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _png_size(b64: str) -> tuple[int, int]:
    png = base64.b64decode(_text(b64))
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        return (-1, -1)
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def figure_problems(nb) -> list[str]:
    """What is wrong with the image outputs of ``nb``, one line per problem, by cell index."""
    problems = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        images = [o for o in cell.get("outputs", []) if any(k.startswith("image/") for k in o.get("data", {}))]
        if len(images) > 1:
            problems.append(f"cell {i}: {len(images)} figures; show one figure per cell")
        cell_alt = cell.metadata.get("mystnb", {}).get("image", {}).get("alt")
        for out in images:
            data, meta = out["data"], out.get("metadata", {}).get("image/png", {})
            kinds = sorted(k for k in data if k.startswith("image/"))
            if kinds != ["image/png"]:
                problems.append(f"cell {i}: image output of type {kinds}; pe_lib.show displays one image/png")
            digest = _text(data.get("text/plain", ""))
            if not digest.startswith("Figure data"):
                problems.append(
                    f"cell {i}: no figure digest beside the image (text/plain is {digest[:40]!r}): "
                    'end the cell with pe_lib.show(fig, alt="...")'
                )
            alt = meta.get("alt")
            if not isinstance(alt, str) or len(alt.split()) < 4 or FILE_NAME.search(alt):
                problems.append(f"cell {i}: alt text {alt!r} in the output metadata: describe the figure in 4+ words")
            if cell_alt != alt:
                problems.append(
                    f"cell {i}: cell metadata mystnb.image.alt {cell_alt!r} differs from the output's alt {alt!r}: "
                    "re-run tools/execute.py on the notebook"
                )
            width, height = meta.get("width"), meta.get("height")
            if not isinstance(width, int) or not isinstance(height, int):
                problems.append(f"cell {i}: no width/height in the image metadata")
                png_width = _png_size(data["image/png"])[0] if "image/png" in data else -1
                if png_width > MAX_WIDTH:
                    problems.append(f"cell {i}: the PNG is {png_width} px wide; the text column holds {MAX_WIDTH} px")
                continue
            if width > MAX_WIDTH:
                problems.append(f"cell {i}: the figure is {width} px wide; the text column holds {MAX_WIDTH} px")
            if "image/png" in data and _png_size(data["image/png"]) != (2 * width, 2 * height):
                problems.append(f"cell {i}: the PNG is {_png_size(data['image/png'])}, not twice {width}x{height}")
            for covered in meta.get("legend_over_data") or []:  # pe_lib.book.figures.legend_over_data
                problems.append(f"cell {i}: {covered} (move the legend off the data)")
            for where, drawn in (("", meta), ("phone rendering, ", meta.get("phone"))):
                if drawn is None:  # a figure without a phone rendering: the site shows the desktop one
                    continue
                if "ticks_off_integers" not in drawn:  # never checked: not made by the current pe_lib.show
                    problems.append(f"cell {i}: {where}no ticks_off_integers: re-run tools/execute.py on the notebook")
                for ticks in drawn.get("ticks_off_integers", []):  # pe_lib.book.figures.ticks_off_integers
                    problems.append(f"cell {i}: {where}{ticks} (put the ticks on whole numbers: "
                                    "ax.xaxis.set_major_locator(MaxNLocator(integer=True)))")
            if digest.startswith("Figure data") and not digest.startswith(f"Figure data: {width}x{height} px"):
                problems.append(f"cell {i}: the digest's size {digest.splitlines()[0]!r} is not {width}x{height}")
    return problems


# A 390 px phone's text column, measured in Chromium on the built site (figures are shown this wide), and
# the tallest figure it shows whole on its 844 px screen next to the browser's bars and a caption line.
PHONE_COLUMN = 342
PHONE_MAX_HEIGHT = 700
# (notebook, cell index): why the figure is still taller; remove the line when the figure is redrawn
TOO_TALL_ON_A_PHONE: dict[tuple[str, int], str] = {}


def phone_heights(nb) -> dict[int, float]:
    """{cell index: the CSS px height of its figure on a 390 px phone} for every figure of ``nb``."""
    heights = {}
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            meta = out.get("metadata", {}).get("image/png", {})
            shown = meta.get("phone") or meta
            if isinstance(shown.get("width"), int) and isinstance(shown.get("height"), int):
                heights[i] = shown["height"] * min(1.0, PHONE_COLUMN / shown["width"])
    return heights


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_figure_fits_a_phone_screen(path):
    heights = phone_heights(nbformat.read(path, as_version=4))
    tall = {i: h for i, h in heights.items() if h > PHONE_MAX_HEIGHT}
    known = {i for (stem, i) in TOO_TALL_ON_A_PHONE if stem == path.stem}
    problems = [f"cell {i}: the figure is {h:.0f} CSS px tall on a phone, more than {PHONE_MAX_HEIGHT}: give "
                "pe_lib.show a phone=(width, height) or a phone drawing"
                for i, h in sorted(tall.items()) if i not in known]
    problems += [f"cell {i} is listed in TOO_TALL_ON_A_PHONE but its figure fits now: remove the line"
                 for i in sorted(known - set(tall))]
    assert not problems, f"{path.name}:\n  " + "\n  ".join(problems)


def test_the_phone_height_check_reads_the_phone_rendering():
    nb = nbformat.v4.new_notebook()
    tall = {"width": 760, "height": 500, "phone": {"width": 420, "height": 960}}
    nb.cells = [nbformat.v4.new_code_cell("x", outputs=[
        nbformat.v4.new_output("display_data", data={"image/png": ""}, metadata={"image/png": tall})])]
    assert phone_heights(nb) == {0: 960 * PHONE_COLUMN / 420}  # 782 px: too tall, though 500 on a desktop
    del nb.cells[0].outputs[0].metadata["image/png"]["phone"]
    assert phone_heights(nb) == {0: 500 * PHONE_COLUMN / 760}  # no phone rendering: the figure, scaled


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_figure_comes_from_pe_lib_show(path):
    problems = figure_problems(nbformat.read(path, as_version=4))
    assert not problems, f"{path.name}: {len(problems)} problem(s)\n  " + "\n  ".join(problems)


# ---- the check itself, on a figure shown the way a chapter shows it ------------------------------
def shown(fig: Figure, alt: str):
    """A code cell holding what ``pe_lib.show`` displays, with the alt text copied as tools/execute.py does."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import execute
    finally:
        sys.path.pop(0)
    with mock.patch("IPython.display.display") as display:
        pe_lib.show(fig, alt=alt)
    (bundle,), kwargs = display.call_args
    cell = nbformat.v4.new_code_cell(
        "pe_lib.show(fig, alt=...)",
        outputs=[nbformat.v4.new_output("display_data", data=bundle, metadata=kwargs["metadata"])],
    )
    execute._copy_alt_text(cell)
    nb = nbformat.v4.new_notebook()
    nb.cells = [cell]
    return nb


def figure(width=6.0):
    fig = Figure(figsize=(width, 3), dpi=100)
    fig.subplots().plot([0.0, 0.5, 1.0], [1.0, 0.5, 0.25])  # a continuous x: matplotlib may tick it at 0.25
    return fig


ALT = "A falling line through three points."


def test_a_figure_shown_with_pe_lib_show_passes():
    assert figure_problems(shown(figure(7.6), ALT)) == []


def test_a_plain_inline_figure_fails():
    nb = shown(figure(), ALT)
    out = nb.cells[0].outputs[0]
    out.data["text/plain"] = "<Figure size 600x300 with 1 Axes>"  # what the inline backend stores
    out.metadata = {}
    del nb.cells[0].metadata["mystnb"]
    problems = figure_problems(nb)
    assert [p.split(":")[1].strip()[:20] for p in problems] == [
        "no figure digest bes", "alt text None in the", "no width/height in t", "the PNG is 1200 px w",
    ]  # fmt: skip  (without width metadata the 2x PNG shows at 1200 px)
    out.metadata = {}
    buf = io.BytesIO()
    figure(7.7).savefig(buf, format="png", dpi=200)  # 1540 px, no metadata
    out.data["image/png"] = base64.b64encode(buf.getvalue()).decode("ascii")
    assert "the PNG is 1540 px wide" in figure_problems(nb)[-1]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda nb: nb.cells[0].metadata["mystnb"]["image"].update(alt="Another text of four words."), "differs"),
        (lambda nb: nb.cells[0].outputs[0].metadata["image/png"].update(alt="fig 1 of 3.png"), "4+ words"),
        (lambda nb: nb.cells[0].outputs[0].metadata["image/png"].update(alt="Three words only"), "4+ words"),
        (lambda nb: nb.cells[0].outputs[0].metadata["image/png"].update(width=800), "800 px wide"),
        (lambda nb: nb.cells[0].outputs[0].metadata["image/png"].update(height=100), "not twice"),
        (lambda nb: nb.cells[0].outputs.append(nb.cells[0].outputs[0]), "one figure per cell"),
        (lambda nb: nb.cells[0].outputs[0].data.update({"image/svg+xml": "<svg/>"}), "one image/png"),
        (lambda nb: nb.cells[0].outputs[0].data.update({"text/plain": "Figure data: 1x1 px"}), "digest's size"),
        (lambda nb: nb.cells[0].outputs[0].metadata["image/png"].update(
            legend_over_data=["axes 0: the legend covers line 'sequence length'"]), "legend covers line"),
        (lambda nb: nb.cells[0].outputs[0].metadata["image/png"].update(
            ticks_off_integers=["axes 0 x: ticks at 2.5 between whole-number data"]), "ticks at 2.5"),
        (lambda nb: nb.cells[0].outputs[0].metadata["image/png"].update(
            phone={"ticks_off_integers": ["axes 1 x: ticks at 7.5 between whole-number data"]}),
         "phone rendering, axes 1 x: ticks at 7.5"),
        (lambda nb: nb.cells[0].outputs[0].metadata["image/png"].pop("ticks_off_integers"),
         "no ticks_off_integers: re-run"),  # a figure the tick check never saw is not a passing one
        (lambda nb: nb.cells[0].outputs[0].metadata["image/png"].update(phone={}),
         "phone rendering, no ticks_off_integers"),
    ],
)
def test_each_broken_property_fails(change, message):
    nb = shown(figure(), ALT)
    change(nb)
    problems = figure_problems(nb)
    assert problems and all(p.startswith("cell 0: ") for p in problems)
    assert any(message in p for p in problems), problems


# ---- every figure says its finding (issue 30, item 6) -------------------------------------------------------
# chapters whose finding-captions were being written on other branches when this check was written: their
# figures still show the alt text as caption. Remove a chapter from the set once its captions are in.
CAPTIONS_PENDING: set[str] = set()


def figures_without_a_finding(nb) -> list[int]:
    """The cells of ``nb`` whose figure has no ``caption`` (``pe_lib.show(..., caption=...)``): the site then
    captions it with its alt text, a description of the picture instead of what it shows."""
    return [i for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
            for out in cell.get("outputs", []) if "image/png" in out.get("data", {})
            and "caption" not in out.get("metadata", {}).get("image/png", {})]


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.stem not in CAPTIONS_PENDING], ids=lambda p: p.stem)
def test_every_figure_states_its_finding(path):
    missing = figures_without_a_finding(nbformat.read(path, as_version=4))
    assert not missing, (f"{path.name}: the figures of cells {missing} have no caption: pass pe_lib.show a caption "
                         "that says what the figure shows (the alt text describes the picture)")


def test_a_figure_without_a_caption_is_found():
    nb = shown(figure(), ALT)
    assert figures_without_a_finding(nb) == [0]
    nb.cells[0].outputs[0].metadata["image/png"]["caption"] = "The line falls by half at every step."
    assert figures_without_a_finding(nb) == []
