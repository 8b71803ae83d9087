"""Showing a figure in a chapter: a sharp PNG, a description for screen readers, and its data as text.

A chapter ends a figure cell with ``pe_lib.show(fig, alt="...")``. That displays one output with

* ``image/png`` rendered at twice the figure's resolution, with ``width``/``height`` metadata at
  1x so that browsers show it at its designed size and sharp on high-density screens. The PNG holds
  an adaptive palette of 256 colours when that reproduces the drawing almost exactly (line plots,
  heat maps of one colour map: their other colours are anti-aliasing blends), about a third of the
  bytes of full colour; otherwise full colour, losslessly (:func:`encode_png`);
* ``phone`` in the output metadata (``metadata["image/png"]["phone"]``: a 2x PNG, ``width``,
  ``height``, and ``stacked``: whether panels side by side now stand one above the other): the same
  figure laid out for a phone's text column, 420 px wide with the same fonts,
  its panels stacked (:func:`phone_figure`), for a figure wider than that, when the chapter is executed
  for the book (``tools/execute.py`` sets ``PHONE_ENV``; a reader's Run All skips it). The website shows it on
  narrow screens instead of the desktop image (``_ext/book_figures.py``), so that no text in a
  figure is smaller than 10 CSS px there either (issue 19). nbval does not compare output metadata
  and JupyterLab ignores the key;
* ``min_text_px`` in the output metadata (and in ``phone``): the smallest text the figure draws, in designed
  pixels (:func:`smallest_text_pt`), which the site's check of text sizes scales to the shown width;
* ``legend_over_data`` in the output metadata: what a legend covers (:func:`legend_over_data`, from the
  drawn artists), which ``tests/test_notebook_figures.py`` wants empty for every stored figure;
* ``ticks_off_integers`` in the output metadata (and in ``phone``): ticks between whole numbers on an axis
  whose data are whole numbers (:func:`ticks_off_integers`), which ``tests/test_notebook_figures.py`` wants
  empty for every stored figure;
* ``caption`` in the output metadata, when given: the finding the website's caption says (``_ext/book_figures.py``);
* ``alt`` in the output metadata: ``tools/execute.py`` copies it into the cell's
  ``mystnb.image.alt``, which myst-nb writes into the page's ``<img alt=...>``;
* ``text/plain``: :func:`figure_digest`, a rounded summary of every number the figure draws.
  Browsers and JupyterLab show the image; nbval compares the text, so a changed plot fails
  ``make test`` even though nbval never compares pixels.
"""

from __future__ import annotations

import base64
import copy
import io
import os
import re
import warnings

import numpy as np
from matplotlib.collections import Collection
from matplotlib.figure import Figure
from matplotlib.gridspec import GridSpecFromSubplotSpec
from matplotlib.image import AxesImage
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.patches import Rectangle

# The book's text column is about 760 CSS pixels wide; a wider figure would be shrunk, and its text
# with it. Figures are designed at 100 dpi, so this is 7.6 inches.
MAX_WIDTH_PX = 760
RESOLUTION = 2  # device pixels per CSS pixel in the stored PNG
DIGEST_PREFIX = "Figure data"
# A palette replaces the full-colour pixels only if no more than PALETTE_MAX_SHARE of the pixels move by
# more than PALETTE_TOLERANCE levels (of 255) in a channel (those are anti-aliased edge pixels) and the
# mean move is at most PALETTE_MAX_MEAN levels (a smooth gradient of many colours would show bands).
PALETTE_TOLERANCE = 16
PALETTE_MAX_SHARE = 0.005
PALETTE_MAX_MEAN = 1.0


SCALE_SLACK = 1e-9


def _rounded(x: float, quantum: float) -> str:
    v = round(float(x) / quantum) * quantum
    return "0" if v == 0 else f"{v:.4g}"  # "0" also for -0.0


def _stats(values) -> str:
    """Count, min, max, mean and mean |value|, each to 4 significant digits of the largest |value|.

    Rounding on the scale of the data (not of each number) keeps a mean that is 0 up to rounding
    error at "0" on every CPU, while any change larger than 1e-4 of the scale shows.
    """
    a = np.asarray(values, dtype=float).ravel()
    a = a[np.isfinite(a)]
    if a.size == 0:
        return "no finite values"
    scale = np.abs(a).max()
    # a scale within SCALE_SLACK (1e-9) below a power of ten counts as that power: a maximum that is 1 on one CPU
    # and 0.9999999999999998 on another must not move the quantum (and every printed digit) tenfold
    quantum = 10.0 ** (np.floor(np.log10(scale * (1 + SCALE_SLACK))) - 3) if scale > 0 else 1.0
    numbers = (a.min(), a.max(), a.mean(), np.abs(a).mean())
    mn, mx, mean, mean_abs = (_rounded(v, quantum) for v in numbers)
    return f"n={a.size} min={mn} max={mx} mean={mean} mean|.|={mean_abs}"


def figure_digest(fig: Figure) -> str:
    """Every number a figure draws, summarised: one line per drawn object, 4 significant digits.

    For each axes (in order): its title, then each line (``x`` and ``y``), image (the array), patch
    collection or scatter (offsets and colour values; a quiver's arrows ``U``, ``V`` too) and bar
    (heights), each as count, min, max,
    mean and mean absolute value. Returns the lines joined by newlines; the first line starts with
    ``"Figure data"`` and gives the size in CSS pixels.
    """
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    w, h = (fig.get_size_inches() * fig.dpi).round().astype(int)
    out = [f"{DIGEST_PREFIX}: {w}x{h} px, {len(fig.axes)} axes"]
    for i, ax in enumerate(fig.axes):
        title = ax.get_title() or ax.get_ylabel() or ""
        out.append(f"axes {i} {title!r}")
        for line in ax.get_lines():
            x, y = line.get_data()
            out.append(f"  line x: {_stats(x)}; y: {_stats(y)}")
        for image in ax.get_images():
            assert isinstance(image, AxesImage)
            arr = np.asarray(image.get_array())
            out.append(f"  image {'x'.join(map(str, arr.shape))}: {_stats(arr)}")
        for coll in ax.collections:
            assert isinstance(coll, Collection)
            parts = [f"  {type(coll).__name__}"]
            offsets = coll.get_offsets()
            if len(offsets):
                parts.append(f"offsets {_stats(offsets)}")
            arr = coll.get_array()
            if arr is not None:
                parts.append(f"values {_stats(arr)}")
            if hasattr(coll, "U") and hasattr(coll, "V"):  # a Quiver: its arrows, not only where they start
                parts.append(f"arrows u {_stats(coll.U)}; v {_stats(coll.V)}")
            out.append(" ".join(parts))
        bars = [p for p in ax.patches if isinstance(p, Rectangle)]
        if bars:
            out.append(f"  {len(bars)} bars: heights {_stats([b.get_height() for b in bars])}")
    return "\n".join(out)


def encode_png(rgba) -> bytes:
    """A small PNG of an ``(height, width, 4)`` uint8 RGBA image that looks the same as the image.

    An opaque image is quantized to an adaptive palette of 256 colours (Pillow's median cut, no
    dithering) and the palette is kept if at most ``PALETTE_MAX_SHARE`` of the pixels differ from
    the image by more than ``PALETTE_TOLERANCE`` levels in any channel and the mean difference (the
    largest channel's, over all pixels) is at most ``PALETTE_MAX_MEAN``; otherwise, and for an image
    with transparency, the PNG is lossless (RGB, or RGBA when any pixel is transparent). Nothing but
    the pixels is stored (no "Software" stamp), so the bytes depend on the image only.
    Returns the PNG file's bytes.
    """
    from PIL import Image

    rgba = np.asarray(rgba)
    if rgba.dtype != np.uint8 or rgba.ndim != 3 or rgba.shape[2] != 4 or 0 in rgba.shape:
        raise ValueError(f"rgba must be a (height, width, 4) uint8 array, got {rgba.dtype} of shape {rgba.shape}")
    buf = io.BytesIO()
    if not (rgba[..., 3] == 255).all():
        Image.fromarray(rgba, mode="RGBA").save(buf, format="PNG")
        return buf.getvalue()
    rgb = Image.fromarray(np.ascontiguousarray(rgba[..., :3]), mode="RGB")  # (height, width, 3)
    palette = rgb.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    moved = np.abs(np.asarray(palette.convert("RGB"), dtype=np.int16) - rgba[..., :3]).max(axis=2)
    faithful = np.mean(moved > PALETTE_TOLERANCE) <= PALETTE_MAX_SHARE and moved.mean() <= PALETTE_MAX_MEAN
    (palette if faithful else rgb).save(buf, format="PNG")  # zlib level 6: level 9 saves 5% in 7x the time
    return buf.getvalue()


def _png(fig: Figure, dpi: float) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, facecolor=fig.get_facecolor())
    buf.seek(0)
    with Image.open(buf) as drawn:
        rgba = np.asarray(drawn.convert("RGBA"))  # (height, width, 4)
    return encode_png(rgba)


# ---- the phone rendering ----------------------------------------------------------------------------
# A phone's text column is about 340 CSS px (measured: 342 px at 390 px, 312 px at 360 px, pydata theme).
# The smallest text of notebooks/matplotlibrc (10 pt at 100 dpi, 13.9 designed px) stays at 10 CSS px or
# more where a figure designed PHONE_WIDTH_PX wide is shown at least 0.72 x that: from a 303 px column on.
PHONE_WIDTH_PX = 420
PHONE_LAYOUTS = ("stack", "keep")
# The phone rendering costs about twice the time of the desktop PNG, and only the website needs it:
# tools/execute.py (make execute, which writes the outputs the book is built from) sets this variable
# to "1" for its kernels. A reader's Run All in Jupyter, nbval and make bench leave it unset and draw
# the desktop PNG only; the site's build fails on a figure without its phone rendering and says to
# re-execute the chapter with tools/execute.py.
PHONE_ENV = "PE_LIB_PHONE_FIGURES"


def phone_renderings_on() -> bool:
    """Whether :func:`shown` adds the phone rendering: the environment variable ``PHONE_ENV`` is ``"1"``."""
    return os.environ.get(PHONE_ENV) == "1"

# a phone panel keeps the desktop panel's height, shrunk towards the narrower width, but by no more than this
PHONE_MIN_HEIGHT_SHARE = 0.8
# a one-panel figure's legend larger than this share of the panel moves below it (it would cover the data)
PHONE_LEGEND_SHARE = 0.12
# ... and grows by these factors, in turn, while constrained layout finds no room for the panels
PHONE_HEIGHT_GROWTH = (1.0, 1.25, 1.5, 2.0)


def _cells(fig: Figure):
    """The figure's panels as cells of one grid: ``(grid, {(rows, cols): [subplot specs]})``, or ``None``.

    Every axes that has a subplot spec belongs to the cell of its topmost spec (a colorbar made beside a
    panel without a layout engine sits in a grid nested in the panel's cell). Axes without a spec follow
    their panel (a colorbar of constrained layout, an inset); any other, placed by hand, makes the
    figure impossible to re-flow: ``None``.
    """
    grid, cells = None, {}
    for ax in fig.axes:
        spec = ax.get_subplotspec()
        if spec is None:
            if hasattr(ax, "_colorbar") or ax.get_axes_locator() is not None:
                continue
            return None
        top = spec.get_topmost_subplotspec()
        if grid is None:
            grid = top.get_gridspec()
        elif top.get_gridspec() is not grid:
            return None
        key = ((top.rowspan.start, top.rowspan.stop), (top.colspan.start, top.colspan.stop))
        cells.setdefault(key, []).append(spec)
    return (grid, cells) if grid is not None else None


def _stack(fig: Figure, grid, cells: dict, columns: int = 1) -> int:
    """Move the figure's cells into ``columns`` columns, in reading order (row by row); returns the rows."""
    from matplotlib.gridspec import GridSpec

    order = sorted(cells)
    rows = -(-len(order) // columns)
    column = GridSpec(rows, columns, figure=fig)
    for i, key in enumerate(order):
        for spec in cells[key]:
            new = column[i // columns, i % columns]
            gs = spec.get_gridspec()
            if isinstance(gs, GridSpecFromSubplotSpec):  # nested in the cell: move the grid's own cell
                while isinstance(gs._subplot_spec.get_gridspec(), GridSpecFromSubplotSpec):  # no public getter
                    gs = gs._subplot_spec.get_gridspec()
                gs._subplot_spec = new  # the nested grid reads it whenever it is laid out
            else:
                for ax in fig.axes:
                    if ax.get_subplotspec() is spec:
                        ax.set_subplotspec(new)
    # side by side, panels that share an axis showed its tick labels once; one above the other, each needs them
    for ax in fig.axes:
        if len(ax.get_shared_y_axes().get_siblings(ax)) > 1:
            ax.yaxis.set_tick_params(which="both", labelleft=True)
        if len(ax.get_shared_x_axes().get_siblings(ax)) > 1:
            ax.xaxis.set_tick_params(which="both", labelbottom=True)
    return rows


def _phone_choice(fig: Figure, phone) -> tuple[tuple[float, float] | None, object]:
    """``phone`` checked (see :func:`phone_figure`): ``(size in inches or None, layout)``; ValueError if wrong."""
    size = None
    if isinstance(phone, Figure):
        if phone is fig:
            raise ValueError("phone must be another figure than fig (drawn for the phone's column), got fig itself")
        px = phone.get_size_inches()[0] * phone.dpi
        if px > PHONE_WIDTH_PX + 0.5:
            raise ValueError(f"phone as a figure must be at most {PHONE_WIDTH_PX} px wide, got {px:.0f} px")
        return None, phone
    if isinstance(phone, tuple):
        if len(phone) != 2 or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in phone):
            raise ValueError(f"phone as a size must be (width, height) in inches, both positive, got {phone!r}")
        if phone[0] * fig.dpi > PHONE_WIDTH_PX + 0.5:
            raise ValueError(
                f"phone width {phone[0]:g} in is {phone[0] * fig.dpi:.0f} px at dpi {fig.dpi:g}; a phone's column "
                f"holds {PHONE_WIDTH_PX} px: at most {PHONE_WIDTH_PX / fig.dpi:.2f} inches"
            )
        size, phone = (float(phone[0]), float(phone[1])), None
    elif isinstance(phone, int) and not isinstance(phone, bool):
        if not 1 <= phone <= 3:
            raise ValueError(f"phone as a number of columns must be 1, 2 or 3, got {phone}")
    elif phone is not None and not (isinstance(phone, str) and phone in PHONE_LAYOUTS):
        raise ValueError(
            f"phone must be None, one of {PHONE_LAYOUTS}, a number of columns, (width, height) in inches or a "
            f"Figure, got {phone!r}")
    return size, phone


def restacks(fig: Figure, phone=None) -> bool:
    """Whether the phone rendering of ``fig`` (see :func:`phone_figure`) puts panels that stand side by side
    into fewer columns, so that a caption's "left" and "right" become "top" and "below" on a phone."""
    _, choice = _phone_choice(fig, phone)
    if isinstance(choice, Figure):
        return False
    found = _cells(fig)
    stack, columns = _stacking(choice, found)
    return stack and found is not None and found[0].ncols > columns


def _stacking(phone, found) -> tuple[bool, int]:
    """The one decision :func:`phone_figure` and :func:`restacks` share: whether the copy re-flows the grid
    ``found`` (from ``_cells``) and into how many columns, for ``phone`` as :func:`_phone_choice` returns it."""
    columns = phone if isinstance(phone, int) else 1
    stack = phone == "stack" or isinstance(phone, int) or (phone is None and found is not None and found[0].ncols > 1)
    return stack, columns


def phone_figure(fig: Figure, phone=None) -> Figure | None:
    """A copy of ``fig`` laid out for a phone's text column, or ``None`` if ``fig`` already fits one.

    ``fig`` itself is never changed. The copy is ``PHONE_WIDTH_PX`` (420) designed pixels wide, so its
    10 pt labels are at least 10 CSS px in a phone's column of 303 px or more. ``phone``:

    * ``None`` (default): panels side by side (a grid of more than one column) are stacked in one
      column in reading order ("stack"); a figure of one column, or with axes placed by hand, keeps its
      layout ("keep"). A figure at most ``PHONE_WIDTH_PX`` wide gets no copy (``None`` is returned).
    * ``"stack"`` / ``"keep"``: that layout, whatever the figure's grid.
    * ``(width, height)`` in inches: the default layout at this size (width at most
      ``PHONE_WIDTH_PX / dpi``).
    * ``2`` (or another number of columns): the panels re-flowed into a grid of that many columns
      (four clocks side by side become two rows of two).
    * a :class:`~matplotlib.figure.Figure` at most ``PHONE_WIDTH_PX`` wide: the chapter's own drawing
      for the phone (a picture laid out by hand, such as :func:`pe_lib.encoding_bars` with
      ``compact=True``), returned as it is.

    A stacked panel is ``PHONE_WIDTH_PX`` wide and as tall as the desktop panel scaled by its change of
    width, between ``PHONE_MIN_HEIGHT_SHARE`` (0.8) and 1 times the desktop panel's height; a kept
    layout scales the figure's height the same way. The copy is laid out by matplotlib's constrained
    layout (tight layout where a colorbar needs it).
    """
    size, phone = _phone_choice(fig, phone)
    if isinstance(phone, Figure):
        return phone
    w_in, h_in = fig.get_size_inches()
    if size is None and phone is None and w_in * fig.dpi <= PHONE_WIDTH_PX + 0.5:
        return None
    small = copy.deepcopy(fig)
    if small.canvas.manager is not None:  # a copy of a pyplot figure joins pyplot's figures: not to be shown
        import matplotlib.pyplot as plt

        plt.close(small)
    width = PHONE_WIDTH_PX / fig.dpi
    found = _cells(small)
    columns = phone if isinstance(phone, int) else 1
    stack = phone == "stack" or isinstance(phone, int) or (phone is None and found is not None and found[0].ncols > 1)
    if stack and found is None:
        raise ValueError(f"phone={phone!r} needs every axes in one grid of subplots; this figure has axes placed by "
                         "hand")
    if stack:
        grid, cells = found
        rows = _stack(small, grid, cells, columns)
        cell_w, cell_h = w_in / grid.ncols, h_in / grid.nrows
        height = rows * cell_h * min(1.0, max(PHONE_MIN_HEIGHT_SHARE, width / columns / cell_w))
    else:
        height = h_in * min(1.0, max(PHONE_MIN_HEIGHT_SHARE, width / w_in))
    width, height = size or (width, height)
    nested = any(isinstance(ax.get_gridspec(), GridSpecFromSubplotSpec) for ax in small.axes if ax.get_subplotspec())
    if found is None and small.get_layout_engine() is None:
        pass  # axes placed by hand stay where they were put
    elif nested and not isinstance(small.get_layout_engine(), ConstrainedLayoutEngine):
        small.set_layout_engine("tight")  # colorbars in grids nested in their panel's cell: constrained layout fails
    elif not isinstance(small.get_layout_engine(), ConstrainedLayoutEngine):
        try:
            small.set_layout_engine("constrained")
        except RuntimeError:  # colorbars made for a grid (tight layout, or none): that engine's kind
            small.set_layout_engine("tight")
    for grow in PHONE_HEIGHT_GROWTH:  # taller while the labels and legends leave the panels no room
        small.set_size_inches(width, height * grow)
        with warnings.catch_warnings():  # the layouts on the way (a legend still too wide, say) are not the result
            warnings.simplefilter("ignore")
            _fit_texts(small)
        # the first layout of moved panels starts from the desktop's colorbar positions and comes out too
        # narrow on the left; a second one (this draw, then the PNG's) starts from a phone layout
        if not _collapses(small):
            return small
    raise ValueError(
        f"the phone layout of this figure ({width:.2f} x {height:.2f} in, up to {PHONE_HEIGHT_GROWTH[-1]:g} times "
        f"as tall) leaves its panels no room: pass phone=(width, height) in inches, or phone='keep'")


def _fit_texts(fig: Figure) -> None:
    """Long titles and axis labels break into lines, a legend wider than the figure gets fewer columns,
    and automatic ticks whose labels collide are thinned.

    A title written for a 760 px figure can be wider than 420 px; constrained layout makes room for
    the lines of a broken title. A legend of several columns (above the panels, say) would be cut.
    """
    moved = _legend_below(fig)
    width = fig.get_size_inches()[0] * fig.dpi
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    for legend in legends:  # the most columns that fit
        while legend._ncols > 1 and (_collapses(fig) or legend.get_window_extent().width > width):
            _legend_columns(legend, legend._ncols - 1)
    if moved is not None:  # the figure grows by the legend's height, so that the panel keeps its own
        fig.draw_without_rendering()
        w, h = fig.get_size_inches()
        fig.set_size_inches(w, h + moved.get_window_extent().height / fig.dpi)
    box, broken = fig.bbox, True
    for _ in range(2):  # again once the layout has made room for the broken lines (the panels moved)
        if not broken:
            break
        fig.draw_without_rendering()
        broken = False
        for text in [fig._suptitle, fig._supxlabel, fig._supylabel]:
            if text is not None:
                broken |= _wrap(text, 0.96 * (box.height if text is fig._supylabel else box.width))
        for ax in fig.axes:  # a centred text may reach twice as far as its centre is from the nearer edge
            panel = ax.get_window_extent()
            cx, cy = (panel.x0 + panel.x1) / 2, (panel.y0 + panel.y1) / 2
            across = 2 * max(0.25 * box.width, min(cx - box.x0, box.x1 - cx))
            up = 2 * max(0.25 * box.height, min(cy - box.y0, box.y1 - cy))
            for text in (ax.title, ax.xaxis.label):
                broken |= _wrap(text, 0.96 * across)
            broken |= _wrap(ax._left_title, 0.96 * (box.x1 - panel.x0))
            broken |= _wrap(ax._right_title, 0.96 * (panel.x1 - box.x0))
            broken |= _wrap(ax.yaxis.label, 0.96 * up)
    if broken:  # each draw costs about as much as the PNG's: only when something changed
        fig.draw_without_rendering()
    _thin_ticks(fig)


def _legend_below(fig: Figure):
    """The legend of a one-panel figure, if it covers more than ``PHONE_LEGEND_SHARE`` of the panel,
    moved below the panel (a figure legend that constrained layout makes room for). Returns it, or None.

    On a desktop such a legend sits in the panel beside the data; in a panel half as wide it covers
    the data. A legend the chapter anchored somewhere (``bbox_to_anchor``) stays where it was put.
    """
    panels = [ax for ax in fig.axes if not hasattr(ax, "_colorbar")]
    if len(panels) != 1 or fig.legends or not isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine):
        return None
    ax = panels[0]
    legend = ax.get_legend()
    if legend is None or legend._bbox_to_anchor is not None:
        return None
    fig.draw_without_rendering()
    inside, panel = legend.get_window_extent(), ax.get_window_extent()
    if inside.width * inside.height <= PHONE_LEGEND_SHARE * panel.width * panel.height:
        return None
    handles, labels = legend.legend_handles, [t.get_text() for t in legend.get_texts()]
    title = legend.get_title().get_text() or None
    ncols = legend._ncols
    legend.remove()
    return fig.legend(handles, labels, loc="outside lower center", ncols=ncols, prop=legend.prop, title=title)


def _wrap(text, limit: float) -> bool:
    """Break ``text`` into lines at spaces outside ``$math$`` so that each line is at most ``limit`` px long.

    (matplotlib's own ``wrap=True`` breaks inside mathtext too, which then shows as raw TeX.) Returns
    whether the text changed.
    """
    original = text.get_text()
    along = "height" if abs(text.get_rotation() % 180 - 90) < 1 else "width"
    if getattr(text.get_window_extent(), along) <= limit:
        return False
    lines = []
    for given in original.split("\n"):  # the chapter's own line breaks stay
        words = re.findall(r"(?:\$[^$]*\$|\S)+", given)
        line = words[0] if words else ""
        for word in words[1:]:
            text.set_text(f"{line} {word}")
            if getattr(text.get_window_extent(), along) > limit:
                lines.append(line)
                line = word
            else:
                line = f"{line} {word}"
        lines.append(line)
    text.set_text("\n".join(lines))
    return text.get_text() != original


def _labels_overlap(axis) -> bool:
    """Whether two neighbouring tick labels of ``axis`` (as last drawn) overlap or come within 2 px."""
    boxes = [t.get_window_extent() for t in axis.get_ticklabels() if t.get_visible() and t.get_text()]
    lo, hi = ("x0", "x1") if axis.axis_name == "x" else ("y0", "y1")
    boxes.sort(key=lambda b: getattr(b, lo))
    return any(getattr(b, lo) < getattr(a, hi) + 2 for a, b in zip(boxes[:-1], boxes[1:], strict=True))


def _thin_ticks(fig: Figure) -> None:
    """Fewer ticks on an axis whose automatic tick labels collide in the narrower figure.

    matplotlib picks the number of automatic ticks from the axis's length and the font size, not from
    the labels' width: six-digit labels on a 360 px axis touch. Ticks placed by the chapter stay. On an
    axis whose data are whole numbers (:func:`_counts`), automatic ticks that end up between whole numbers
    are put back on them (steps of 1, 2, 5 or 10 times a power of ten): a shorter axis picks fewer ticks by
    itself, and on Fig. 4.8's phone rendering 0, 2, 4, ..., 16 became 0, 2.5, 5, 7.5, ...
    (:func:`ticks_off_integers`). Ticks already on whole numbers are left as they were.
    """
    from matplotlib.ticker import MaxNLocator

    for ax in fig.axes:
        values = _axis_values(ax)
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            locator = axis.get_major_locator()
            if not isinstance(locator, MaxNLocator):
                continue
            for nbins in range(len(axis.get_majorticklocs()) - 2, 1, -1):
                if not _labels_overlap(axis):
                    break
                locator.set_params(nbins=nbins)
                fig.draw_without_rendering()
            if _counts(values[name]) and _off_whole(axis):  # only then: every other figure's ticks stay as they were
                locator.set_params(integer=True, steps=[1, 2, 5, 10])
                fig.draw_without_rendering()


def _legend_columns(legend, n: int) -> None:
    """Re-pack a legend's entries (in their order, column by column) into ``n`` columns.

    matplotlib has no setter for a legend's columns once it is made; its entries sit in one box per
    column inside ``_legend_handle_box``, which this re-fills as the legend's constructor would.
    """
    from matplotlib.offsetbox import VPacker

    columns = legend._legend_handle_box.get_children()
    items = [item for column in columns for item in column.get_children()]
    per, extra = divmod(len(items), n)  # the first `extra` columns get one entry more, as in Legend
    bounds = np.cumsum([0] + [per + (i < extra) for i in range(n)])
    legend._legend_handle_box.get_children()[:] = [
        VPacker(pad=0, sep=columns[0].sep, align=columns[0].align, children=items[a:b])
        for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]
    legend._ncols = n


def _collapses(fig: Figure) -> bool:
    """Lay ``fig`` out (a draw without pixels); whether constrained layout found no room for the panels."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.draw_without_rendering()
    for w in caught:
        if "collapsed" not in str(w.message):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return any("collapsed" in str(w.message) for w in caught)


def smallest_text_pt(fig: Figure) -> float | None:
    """The size in points of the smallest text the figure draws, or ``None`` if it draws none.

    Every visible :class:`~matplotlib.text.Text` with some non-blank text counts: titles, labels, tick
    labels, legends, annotations (call it after the figure was drawn, as :func:`shown` does after its
    PNG, so that the tick labels exist). At the figure's dpi a size of ``s`` points is ``s * dpi / 72``
    designed pixels; the site's figure-text check scales that by the figure's shown width.
    """
    from matplotlib.text import Text

    sizes = [t.get_fontsize() for t in fig.findobj(Text)
             if t.get_visible() and t.get_text().strip() and (t.axes is None or t.axes.get_visible())]
    return float(min(sizes)) if sizes else None


def legend_over_data(fig: Figure) -> list[str]:
    """What the legends of ``fig`` cover: one line per data artist drawn under a legend of its axes.

    A line (or curve) whose path crosses the legend's box, a scatter point inside it, a bar that
    overlaps it: all in display coordinates, as drawn (call it after the figure was drawn, as
    :func:`shown` does after its PNG). Shading (``fill_between``) and images do not count: a legend may
    stand on a heat map or a shaded range if it hides no curve. Returns e.g. ``["axes 0: the legend
    covers line 'sequence length'"]``; ``[]`` when no legend covers data (issue 30, item 3). A band of
    ``axvspan`` is shading, not a bar.
    """
    from matplotlib.collections import PathCollection
    from matplotlib.container import BarContainer

    found = []
    for i, ax in enumerate(fig.axes):
        legend = ax.get_legend()
        if legend is None or not legend.get_visible():
            continue
        box = legend.get_window_extent()
        for line in ax.get_lines():
            path = line.get_transform().transform_path(line.get_path())
            if line.get_visible() and len(path.vertices) and path.intersects_bbox(box, filled=False):
                found.append(f"axes {i}: the legend covers line {line.get_label()!r}")
        for points in ax.collections:
            if isinstance(points, PathCollection) and points.get_visible() and len(points.get_offsets()):
                xy = points.get_offset_transform().transform(points.get_offsets())
                inside = (xy[:, 0] >= box.x0) & (xy[:, 0] <= box.x1) & (xy[:, 1] >= box.y0) & (xy[:, 1] <= box.y1)
                if inside.any():
                    found.append(f"axes {i}: the legend covers points {points.get_label()!r}")
        bars = [bar for container in ax.containers if isinstance(container, BarContainer) for bar in container
                if bar.get_visible() and bar.get_window_extent().overlaps(box)]  # not a band of axvspan
        if bars:
            found.append(f"axes {i}: the legend covers {len(bars)} bars")
    return found


def _whole(values) -> bool:
    """Whether every value is a whole number (to 1e-9 of its size)."""
    v = np.asarray(values, dtype=float)
    return bool(np.all(np.abs(v - np.round(v)) <= 1e-9 * np.maximum(1.0, np.abs(v))))


def _axis_values(ax) -> dict[str, list[np.ndarray]]:
    """{"x": [...], "y": [...]}: the data values each data artist of ``ax`` draws along each axis.

    Lines drawn in data coordinates (not ``axvline``'s mixed transform on its other axis), scatter
    points, bars (their centres along the category axis, their ends along the value axis) and images (the
    centres of their pixels). A reference line, constant along an axis, says nothing about that axis.
    """
    from matplotlib.collections import PathCollection
    from matplotlib.container import BarContainer

    found = {"x": [], "y": []}
    for line in ax.get_lines():
        if not line.get_visible():
            continue
        xy = np.asarray(line.get_xydata(), dtype=float)
        # axvline / axhline: data along one axis, a fraction of the axes along the other
        in_data = line.get_transform().contains_branch_seperately(ax.transData)
        for k, name in enumerate("xy"):
            if in_data[k] and len(xy):
                found[name].append(xy[:, k])
    for points in ax.collections:
        if isinstance(points, PathCollection) and points.get_visible() and len(points.get_offsets()):
            offsets = np.asarray(points.get_offsets(), dtype=float)
            found["x"].append(offsets[:, 0])
            found["y"].append(offsets[:, 1])
    for container in ax.containers:
        if isinstance(container, BarContainer):
            bars = [bar for bar in container if bar.get_visible()]
            if not bars:
                continue
            horizontal = container.orientation == "horizontal"
            centres = [(b.get_y() + b.get_height() / 2) if horizontal else (b.get_x() + b.get_width() / 2)
                       for b in bars]
            ends = [(b.get_x() + b.get_width()) if horizontal else (b.get_y() + b.get_height()) for b in bars]
            found["y" if horizontal else "x"].append(np.array(centres))
            found["x" if horizontal else "y"].append(np.array(ends))
    for image in ax.get_images():
        if image.get_visible():
            rows, cols = np.asarray(image.get_array()).shape[:2]
            x0, x1, y0, y1 = image.get_extent()
            found["x"].append(x0 + (np.arange(cols) + 0.5) * (x1 - x0) / cols)
            found["y"].append(y0 + (np.arange(rows) + 0.5) * (y1 - y0) / rows)
    return found


def _off_whole(axis) -> list[float]:
    """The major ticks of ``axis`` inside its view that are not whole numbers."""
    low, high = sorted(axis.get_view_interval())
    slack = 1e-9 * max(1.0, abs(low), abs(high))
    return [t for t in axis.get_majorticklocs() if low - slack <= t <= high + slack and not _whole([t])]


def _counts(values: list[np.ndarray]) -> bool:
    """Whether an axis counts: one of its data artists draws 3 or more distinct values along it, all whole."""
    return any(len(np.unique(v)) >= 3 and _whole(v) for v in values)


def ticks_off_integers(fig: Figure) -> list[str]:
    """Ticks between whole numbers on axes whose data are whole numbers: one line per such axis.

    An axis counts as integer-valued when one of its data artists (:func:`_axis_values`: a line, scatter
    points, bars, an image's pixel centres) draws at least 3 distinct values along it, all whole numbers:
    positions, offsets, counts. A major tick of a visible axis inside its view at 2.5 there marks a
    value the quantity never takes (issue 30, item 6: ticks at 2.5, 7.5, 12.5 for integer offsets). A
    smooth curve drawn through the same axis (``np.linspace``) does not make it continuous: the step or
    the points over it say what the axis counts. Returns e.g. ``["axes 0 x: ticks at 2.5, 7.5 between
    whole-number data"]``; ``[]`` when every tick sits on a whole number (call it after the figure was
    drawn, as :func:`shown` does after its PNG, so that the ticks are placed).
    """
    found = []
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible() or not ax.axison:
            continue
        values = _axis_values(ax)
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            if not axis.get_visible() or not _counts(values[name]):
                continue
            ticks = _off_whole(axis)
            if ticks:
                found.append(f"axes {i} {name}: ticks at {', '.join(f'{t:g}' for t in ticks)} "
                             "between whole-number data")
    return found


def _designed_px(points: float | None, dpi: float) -> float | None:
    """A font size in designed pixels (``points * dpi / 72``, 2 decimals): the site shows a figure's pixels
    scaled by its shown width over its designed width."""
    return None if points is None else round(points * dpi / 72, 2)


class ShownFigure:
    """A figure as :func:`show` displays it: ``bundle`` (2x PNG, digest) and ``metadata`` (size, alt).

    IPython displays it through ``_repr_mimebundle_``, so myst-nb's ``glue`` stores exactly this image,
    sized and described as in the chapter, for another page to paste with ``{glue:figure}``.
    """

    def __init__(self, bundle: dict, metadata: dict):
        self.bundle, self.metadata = bundle, metadata

    def _repr_mimebundle_(self, include=None, exclude=None):
        return dict(self.bundle), {k: dict(v) for k, v in self.metadata.items()}


def shown(fig: Figure, *, alt: str, caption: str | None = None, phone=None) -> ShownFigure:
    """What :func:`show` displays, as an object: pass it to ``myst_nb.glue`` to reuse a figure on a page.

    Checks ``fig``, ``alt``, ``caption`` and ``phone`` as :func:`show` does. Returns a :class:`ShownFigure`.
    """
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    if not isinstance(alt, str) or len(alt.split()) < 4 or alt.strip().lower().endswith((".png", ".svg", ".jpg")):
        raise ValueError(f"alt must describe the figure in words (at least 4 words, not a file name), got {alt!r}")
    if caption is not None and (not isinstance(caption, str) or len(caption.split()) < 4
                                or " ".join(caption.split()) == " ".join(alt.split())):
        raise ValueError(f"caption must say what the figure shows in words (at least 4 words, not the alt text), "
                         f"got {caption!r}")
    w, h = (fig.get_size_inches() * fig.dpi).round().astype(int)
    if w > MAX_WIDTH_PX:
        raise ValueError(
            f"the figure is {w} px wide; the text column holds {MAX_WIDTH_PX} px: "
            f"make it at most {MAX_WIDTH_PX / fig.dpi:.2f} inches wide at dpi {fig.dpi:g}"
        )
    png = base64.b64encode(_png(fig, RESOLUTION * fig.dpi)).decode("ascii")
    bundle = {"image/png": png, "text/plain": figure_digest(fig)}
    metadata = {"image/png": {"width": int(w), "height": int(h), "alt": " ".join(alt.split()),
                              "min_text_px": _designed_px(smallest_text_pt(fig), fig.dpi),
                              "legend_over_data": legend_over_data(fig),
                              "ticks_off_integers": ticks_off_integers(fig)}}
    if caption is not None:
        metadata["image/png"]["caption"] = " ".join(caption.split())
    small = None
    if phone_renderings_on():
        small = phone_figure(fig, phone)
    else:
        _phone_choice(fig, phone)  # a wrong phone= is an error in every run, not only in the book's
    if small is not None:
        pw, ph = (small.get_size_inches() * small.dpi).round().astype(int)
        metadata["image/png"]["phone"] = {
            "png": base64.b64encode(_png(small, RESOLUTION * small.dpi)).decode("ascii"),
            "width": int(pw), "height": int(ph), "stacked": restacks(fig, phone),
        }
        # its smallest text, drawn by its PNG just above
        metadata["image/png"]["phone"]["min_text_px"] = _designed_px(smallest_text_pt(small), small.dpi)
        metadata["image/png"]["phone"]["ticks_off_integers"] = ticks_off_integers(small)  # its own ticks
    return ShownFigure(bundle, metadata)


def show(fig: Figure, *, alt: str, caption: str | None = None, phone=None) -> None:
    """Display ``fig`` in a notebook as a 2x PNG with ``alt`` text and its :func:`figure_digest`.

    ``alt``: what the figure shows, in a sentence or two, for readers who cannot see it (not a
    file name). ``caption``: the finding, for the website's caption under the figure (what a reader
    should take from it; the caption is the alt text where none is given); at least 4 words, not the
    alt text again. The figure must fit the text column: at most ``MAX_WIDTH_PX`` (760) pixels wide at
    its dpi. ``phone``: how the phone rendering is laid out where the default does not look right
    (see :func:`phone_figure`: ``"stack"``, ``"keep"``, a number of columns, or ``(width, height)``
    in inches); the rendering itself is made only when ``PHONE_ENV`` is ``"1"`` (``tools/execute.py``).
    A figure made with ``pyplot`` is closed afterwards so that it is not shown twice.
    """
    from IPython.display import display  # only notebooks call this

    figure = shown(fig, alt=alt, caption=caption, phone=phone)
    display(figure.bundle, raw=True, metadata=figure.metadata)
    if fig.canvas.manager is not None:  # made by pyplot: close it, or the inline backend shows it again
        import matplotlib.pyplot as plt

        plt.close(fig)
