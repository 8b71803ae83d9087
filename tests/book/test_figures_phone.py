"""pe_lib.show's phone rendering (issue 19): a copy of the figure laid out for a phone's text column."""

import base64
import io
import warnings
from unittest import mock

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import pe_lib  # noqa: E402
from pe_lib.book import figures  # noqa: E402

ALT = "Three panels of lines side by side."


@pytest.fixture(autouse=True)
def _phone_renderings_on(monkeypatch):
    """As tools/execute.py runs the chapters for the book: pe_lib.show adds the phone rendering."""
    monkeypatch.setenv(figures.PHONE_ENV, "1")


def _panels(n=3, *, width=7.6, height=3.0, layout="constrained", **kwargs):
    fig = Figure(figsize=(width, height), dpi=100, layout=layout)
    axes = np.atleast_1d(fig.subplots(1, n, **kwargs))
    for i, ax in enumerate(axes):
        ax.plot([0, 1, 2], [i, i + 1, i * 2])
        ax.set_title(f"panel {i}")
    return fig


def _png_size(b64: str) -> tuple[int, int]:
    png = base64.b64decode(b64)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def _positions(fig: Figure) -> list[tuple[float, ...]]:
    return [tuple(np.round(ax.get_position().bounds, 6)) for ax in fig.axes]


def test_shown_stores_a_phone_png_420_px_wide_at_twice_the_resolution():
    meta = pe_lib.shown(_panels(), alt=ALT).metadata["image/png"]
    phone = meta["phone"]
    assert phone["width"] == 420 == figures.PHONE_WIDTH_PX
    assert _png_size(phone["png"]) == (840, 2 * phone["height"])
    # three panels 253 px wide and 300 px tall, stacked: each 420 px wide, 300 px tall (no taller than on a desktop)
    assert phone["height"] == 900
    assert (meta["width"], meta["height"]) == (760, 300)  # the desktop image is as before


def test_the_callers_figure_is_not_changed():
    def state(fig):
        return (tuple(fig.get_size_inches()), _positions(fig), pe_lib.figure_digest(fig),
                [ax.get_title() for ax in fig.axes], type(fig.get_layout_engine()), len(fig.axes))

    # constrained layout moves panels by a hair from one draw to the next: compare with a figure drawn
    # as often (shown draws the desktop PNG) but without a phone rendering
    control, fig = _panels(), _panels()
    for figure in (control, fig):
        figure.savefig(io.BytesIO(), format="png")  # laid out, as a chapter's figure is when shown
    assert state(fig) == state(control)
    pe_lib.shown(fig, alt=ALT)
    figures._png(control, 200)
    for figure in (control, fig):
        figure.savefig(io.BytesIO(), format="png")
    assert state(fig) == state(control)


def test_a_pyplot_figure_is_copied_without_joining_pyplots_figures():
    fig, axes = plt.subplots(1, 2, figsize=(7.6, 3))
    for ax in axes:
        ax.plot([0, 1])
    open_before = plt.get_fignums()
    small = figures.phone_figure(fig)
    assert plt.get_fignums() == open_before  # the copy is not shown by the inline backend
    assert small is not fig and len(small.axes) == 2
    with mock.patch("IPython.display.display"):
        pe_lib.show(fig, alt="Two lines side by side in panels.")
    assert not plt.fignum_exists(fig.number)


def test_panels_side_by_side_are_stacked_in_reading_order():
    small = figures.phone_figure(_panels())
    assert tuple(small.get_size_inches()) == pytest.approx((4.2, 9.0))
    boxes = [ax.get_position() for ax in small.axes]
    assert [ax.get_title() for ax in small.axes] == ["panel 0", "panel 1", "panel 2"]
    assert max(b.x0 for b in boxes) - min(b.x0 for b in boxes) < 0.02  # one column
    assert boxes[0].y0 > boxes[1].y1 and boxes[1].y0 > boxes[2].y1  # top to bottom
    assert min(b.width for b in boxes) > 0.75  # each panel nearly as wide as the figure


def test_a_grid_of_two_columns_and_a_kept_layout():
    two = figures.phone_figure(_panels(4), phone=2)
    boxes = [ax.get_position() for ax in two.axes]
    assert boxes[0].y0 == pytest.approx(boxes[1].y0) and boxes[2].y0 == pytest.approx(boxes[3].y0)
    assert boxes[0].x0 < boxes[1].x0 and boxes[0].y0 > boxes[2].y1
    kept = figures.phone_figure(_panels(2), phone="keep")
    left, right = (ax.get_position() for ax in kept.axes)
    assert left.x1 < right.x0 and left.y0 == pytest.approx(right.y0)  # still side by side
    assert tuple(kept.get_size_inches()) == pytest.approx((4.2, 2.4))  # 0.8 of the height at most 0.55 of the width
    sized = figures.phone_figure(_panels(2), phone=(4.0, 5.5))
    assert tuple(sized.get_size_inches()) == pytest.approx((4.0, 5.5))
    one_column = Figure(figsize=(7.6, 5), layout="constrained")
    one_column.subplots(2, 1)
    top, bottom = (ax.get_position() for ax in figures.phone_figure(one_column).axes)
    assert top.y0 > bottom.y1 and tuple(one_column.get_size_inches()) == (7.6, 5)


def test_a_figure_narrow_enough_gets_no_phone_rendering():
    fig = _panels(1, width=4.2)
    assert figures.phone_figure(fig) is None
    assert "phone" not in pe_lib.shown(fig, alt="One panel of lines, narrow.").metadata["image/png"]
    assert figures.phone_figure(fig, phone="keep") is not None  # asked for: made anyway


@pytest.mark.parametrize("bad, message", [
    ("grid", "phone must be None, one of"),
    (1.5, "phone must be None, one of"),
    (True, "phone must be None, one of"),
    ([4.2, 3], "phone must be None, one of"),
    (0, "number of columns must be 1, 2 or 3, got 0"),
    (4, "number of columns must be 1, 2 or 3, got 4"),
    ((4.2,), r"\(width, height\) in inches, both positive, got \(4.2,\)"),
    ((4.2, 0), "both positive"),
    ((4.2, "3"), "both positive"),
    ((7.6, 3), "phone width 7.6 in is 760 px at dpi 100; a phone's column holds 420 px: at most 4.20 inches"),
])
def test_bad_phone_values_are_refused_with_what_is_allowed(bad, message):
    with pytest.raises(ValueError, match=message):
        pe_lib.shown(_panels(), alt=ALT, phone=bad)


def test_axes_placed_by_hand_keep_their_layout_and_cannot_be_stacked():
    fig = Figure(figsize=(7.6, 3))
    fig.add_axes((0.1, 0.1, 0.35, 0.8)).plot([0, 1])
    fig.add_axes((0.55, 0.1, 0.35, 0.8)).plot([1, 0])
    small = figures.phone_figure(fig)
    assert [tuple(np.round(ax.get_position().bounds, 3)) for ax in small.axes] == [
        (0.1, 0.1, 0.35, 0.8), (0.55, 0.1, 0.35, 0.8)]
    with pytest.raises(ValueError, match="phone='stack' needs every axes in one grid of subplots"):
        figures.phone_figure(fig, phone="stack")
    other = Figure(figsize=(7.6, 3))  # two grids: a gridspec of its own for the second panel
    other.add_subplot(1, 2, 1)
    other.add_subplot(other.add_gridspec(1, 3)[0, 2])
    with pytest.raises(ValueError, match="needs every axes in one grid"):
        figures.phone_figure(other, phone=2)


def test_shared_axes_show_their_tick_labels_once_stacked():
    small = figures.phone_figure(_panels(2, sharey=True))
    assert all(t.get_visible() for ax in small.axes for t in ax.get_yticklabels())
    x_shared = figures.phone_figure(_panels(2, sharex=True))
    assert all(ax.xaxis.get_tick_params()["labelbottom"] for ax in x_shared.axes)


def test_colorbars_insets_and_nested_grids_move_with_their_panel():
    fig = _panels(2)
    image = fig.axes[1].imshow(np.arange(4.0).reshape(2, 2))
    fig.colorbar(image, ax=fig.axes[1])
    fig.axes[0].inset_axes((0.6, 0.6, 0.3, 0.3)).plot([0, 1])
    small = figures.phone_figure(fig)
    panel, bar = small.axes[1].get_position(), small.axes[2].get_position()
    assert bar.x0 > panel.x1 and bar.y0 < panel.y1 and bar.y1 > panel.y0  # beside its panel, below the first
    assert panel.y1 < small.axes[0].get_position().y0
    # no layout engine: the colorbar takes part of its panel's cell, a grid nested in it
    plain = Figure(figsize=(7.6, 3))
    a, b = plain.subplots(1, 2)
    plain.colorbar(b.imshow(np.arange(4.0).reshape(2, 2)), ax=b)
    small = figures.phone_figure(plain)
    assert tuple(small.get_size_inches()) == pytest.approx((4.2, 6.0))
    top, bottom = small.axes[0].get_position(), small.axes[1].get_position()
    assert top.y0 > bottom.y1 and all(ax.get_position().y1 < top.y0 for ax in small.axes[1:])


@pytest.mark.filterwarnings("ignore:This figure includes Axes that are not compatible with tight_layout")
def test_colorbars_made_for_tight_layout_keep_that_kind_of_engine():
    for use_gridspec in (True, False):  # a colorbar in a grid nested in the panel's cell, or beside it
        fig = _panels(2, layout="tight")
        fig.colorbar(fig.axes[1].imshow(np.eye(2)), ax=fig.axes[1], use_gridspec=use_gridspec)
        small = figures.phone_figure(fig)
        assert type(small.get_layout_engine()).__name__ == "TightLayoutEngine"
        assert small.axes[0].get_position().y0 > small.axes[1].get_position().y1  # stacked
    plain = Figure(figsize=(7.6, 3))  # two colorbars: grids nested twice in the cell
    a, b = plain.subplots(1, 2)
    plain.colorbar(b.imshow(np.eye(2)), ax=b)
    plain.colorbar(b.images[0], ax=b)
    small = figures.phone_figure(plain)
    assert small.axes[0].get_position().y0 > max(ax.get_position().y1 for ax in small.axes[1:])
    assert type(figures.phone_figure(_panels(2, layout=None)).get_layout_engine()).__name__ == "ConstrainedLayoutEngine"


def test_long_titles_and_labels_break_into_lines_outside_math():
    fig = _panels(1, height=3.4)
    ax = fig.axes[0]
    ax.set_title(r"a long title about $\omega_k = 10000^{-2k/d}$ and the wavelengths of every pair of columns")
    ax.set_xlabel(r"pair $k$ of the column half (wavelength $2\pi \cdot 10000^{k/192}$ patches)")
    ax.set_ylabel("a label far too long for the height of the panel in the phone rendering")
    ax.set_xlim(0, 1)
    fig.suptitle("short\nlines stay")
    small = figures.phone_figure(fig)
    sax = small.axes[0]
    for text in (sax.title, sax.xaxis.label, sax.yaxis.label):
        lines = text.get_text().split("\n")
        assert len(lines) >= 2, text.get_text()
        assert all(line.count("$") % 2 == 0 for line in lines)  # no formula cut in two
    assert small._suptitle.get_text() == "short\nlines stay"
    box = small.bbox
    for text in (sax.title, sax.xaxis.label, sax.yaxis.label):
        extent = text.get_window_extent()
        assert box.x0 <= extent.x0 and extent.x1 <= box.x1 and box.y0 <= extent.y0 and extent.y1 <= box.y1


def test_a_legend_too_wide_for_the_phone_gets_fewer_columns():
    fig = _panels(1, height=3.4)
    ax = fig.axes[0]
    for k in range(6):
        ax.plot([0, 1], [k, k + 1], label=f"a fairly long legend label {k}")
    ax.legend(ncols=3, loc="lower center", bbox_to_anchor=(0.5, 1.02))
    small = figures.phone_figure(fig)
    legend = small.axes[0].get_legend()
    assert legend._ncols < 3
    assert [t.get_text() for t in legend.get_texts()] == [f"a fairly long legend label {k}" for k in range(6)]
    extent = legend.get_window_extent()
    assert small.bbox.x0 <= extent.x0 and extent.x1 <= small.bbox.x1
    assert fig.axes[0].get_legend()._ncols == 3  # the desktop's legend is untouched


def test_colliding_automatic_tick_labels_are_thinned_and_placed_ticks_stay():
    fig = _panels(1, height=3.4)
    ax = fig.axes[0]
    ax.plot([0, 121000], [0, 1])
    ax.set_yticks([0, 1, 2], ["zero", "one", "two"])
    small = figures.phone_figure(fig)
    sax = small.axes[0]
    assert not figures._labels_overlap(sax.xaxis)
    assert len(sax.get_xticks()) < len(fig.axes[0].get_xticks())
    assert list(sax.get_yticks()) == [0, 1, 2]
    # labels too long for even two ticks: as few ticks as the locator gives, and no endless search
    fig = _panels(1, height=3.4)
    fig.axes[0].xaxis.set_major_formatter(lambda x, pos: f"{x:.3f} is a very long tick label")
    sax = figures.phone_figure(fig).axes[0]
    assert len(sax.get_xticks()) <= 4
    # the check itself: two labels that touch are an overlap, on either axis
    fig = Figure(figsize=(2, 2))
    ax = fig.subplots()
    ax.set_xticks([0, 0.01], ["1000000", "2000000"])
    ax.set_yticks([0, 0.01], ["a", "b"])
    fig.draw_without_rendering()
    assert figures._labels_overlap(ax.xaxis) and figures._labels_overlap(ax.yaxis)


def test_a_figure_without_room_grows_taller_and_then_says_what_to_do():
    fig = _panels(1, height=3.4)
    for k in range(14):
        fig.axes[0].plot([0, 1], [k, k], label=f"line {k}")
    fig.legend(loc="outside upper center")
    small = figures.phone_figure(fig, phone=(4.2, 2.0))
    assert small.get_size_inches()[1] > 2.0  # grown until the panel had room
    with pytest.raises(ValueError, match=r"leaves its panels no room: pass phone=\(width, height\)"):
        figures.phone_figure(fig, phone=(4.2, 0.6))


def test_other_warnings_of_the_layout_are_passed_on():
    fig = _panels(1)
    fig.draw_without_rendering = lambda: warnings.warn("something else", UserWarning, stacklevel=1)
    with pytest.warns(UserWarning, match="something else"):
        assert figures._collapses(fig) is False


def test_a_large_legend_of_a_one_panel_figure_moves_below_the_panel():
    def one_panel(**legend_options):
        fig = _panels(1, height=3.4)
        for k in range(6):
            fig.axes[0].plot([0, 1], [k, k + 1], label=f"curve number {k}")
        fig.axes[0].legend(title="curves", **legend_options)
        return fig

    fig = one_panel()
    small = figures.phone_figure(fig)
    assert small.axes[0].get_legend() is None and len(small.legends) == 1
    (legend,) = small.legends
    assert [t.get_text() for t in legend.get_texts()] == [f"curve number {k}" for k in range(6)]
    assert legend.get_title().get_text() == "curves"
    assert legend.get_window_extent().y1 <= small.axes[0].get_window_extent().y0  # below the panel
    assert small.get_size_inches()[1] > 3.4 * 0.8  # taller by the legend's height
    assert fig.axes[0].get_legend() is not None and not fig.legends  # the desktop figure keeps its legend
    # placed by the chapter, or small: it stays
    assert figures.phone_figure(one_panel(bbox_to_anchor=(1, 1))).axes[0].get_legend() is not None
    small_legend = _panels(1, height=3.4)
    small_legend.axes[0].legend(["a"])
    assert figures.phone_figure(small_legend).axes[0].get_legend() is not None


def test_a_readers_run_draws_no_phone_rendering_but_still_checks_phone(monkeypatch):
    """Without PHONE_ENV (Jupyter, nbval, make bench) shown() skips the phone copy, and a wrong phone= is
    still refused; with it set to anything but "1", the same."""
    for value in (None, "0", "yes"):
        if value is None:
            monkeypatch.delenv(figures.PHONE_ENV)
        else:
            monkeypatch.setenv(figures.PHONE_ENV, value)
        meta = pe_lib.shown(_panels(), alt=ALT).metadata["image/png"]
        assert set(meta) == {"width", "height", "alt", "min_text_px", "legend_over_data",
                             "ticks_off_integers"}, value
        with pytest.raises(ValueError, match="phone as a number of columns"):
            pe_lib.shown(_panels(), alt=ALT, phone=4)
    monkeypatch.setenv(figures.PHONE_ENV, "1")
    assert _png_size(pe_lib.shown(_panels(), alt=ALT).metadata["image/png"]["phone"]["png"])[0] == 840


def test_execute_turns_the_phone_renderings_on(monkeypatch):
    """tools/execute.py (make execute, the outputs the site is built from) sets the variable for its kernels."""
    import importlib.util
    from pathlib import Path

    monkeypatch.delenv(figures.PHONE_ENV)
    path = Path(__file__).resolve().parents[2] / "tools" / "execute.py"
    spec = importlib.util.spec_from_file_location("_execute_for_test", path)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    import os

    assert os.environ.get(figures.PHONE_ENV) == "1"


def test_a_figure_drawn_for_the_phone_is_used_as_it_is():
    """phone=<Figure>: a picture laid out by hand (encoding_bars(compact=True)) is the phone rendering."""
    fig = pe_lib.encoding_bars([0, 1, 2], 8)
    small = pe_lib.encoding_bars([0, 1, 2], 8, width=4.2, compact=True)
    assert figures.phone_figure(fig, small) is small
    meta = pe_lib.shown(fig, alt=ALT, phone=small).metadata["image/png"]["phone"]
    assert (meta["width"], meta["height"]) == (420, round(small.get_size_inches()[1] * 100))
    assert _png_size(meta["png"]) == (840, 2 * meta["height"])
    with pytest.raises(ValueError, match="at most 420 px wide, got 640 px"):
        pe_lib.shown(fig, alt=ALT, phone=pe_lib.encoding_bars([0, 1, 2], 8))
    with pytest.raises(ValueError, match="another figure than fig"):
        pe_lib.shown(small, alt=ALT, phone=small)


def test_the_phone_metadata_says_when_panels_side_by_side_are_stacked():
    """'stacked' is what the site's caption note reads: panels side by side put into fewer columns."""
    def stacked(fig, **kwargs):
        return pe_lib.shown(fig, alt=ALT, **kwargs).metadata["image/png"]["phone"]["stacked"]

    assert stacked(_panels(3)) is True  # three side by side -> one column
    assert stacked(_panels(4), phone=2) is True  # four -> two columns
    assert stacked(_panels(3), phone=3) is False  # still three columns, only narrower
    assert stacked(_panels(3), phone="keep") is False
    assert stacked(_panels(1)) is False  # one wide panel keeps its layout
    assert stacked(_panels(3), phone=(4.2, 6.0)) is True  # a size alone keeps the default stacking
    small = pe_lib.encoding_bars([0, 1], 8, width=4.2, compact=True)
    assert stacked(pe_lib.encoding_bars([0, 1], 8), phone=small) is False  # a hand-drawn phone picture
    assert figures.restacks(_panels(2)) is True and figures.restacks(_panels(2), "keep") is False


def test_a_phone_rendering_keeps_the_ticks_of_a_counting_axis_on_whole_numbers():
    """Fig. 4.8 of chapter 4 (bits of positions 0..15 beside sine columns, 4 x 2 panels): its desktop x ticks sat
    on 0, 2, ..., 16; on the phone's shorter axes matplotlib put them at 0, 2.5, 5, 7.5, ... (issue 30). The phone
    rendering keeps an axis whose data are whole numbers on whole ticks (planted: that step removed, the ticks
    at 2.5 come back)."""
    fig = Figure(figsize=(7.6, 6.4), dpi=100, layout="constrained")
    axes = fig.subplots(4, 2, sharex=True, sharey=True)
    fine = np.linspace(0, 16, 1601)
    for b in range(4):
        axes[b, 0].step(np.arange(16), np.arange(16) % 2, where="post", label="bit")
        axes[b, 0].plot(fine, np.sin(fine), ls="--", label="sine")
        axes[b, 0].set_ylabel(f"b = {b}\n$\\lambda$ = {2 ** (b + 1)}")
        axes[b, 1].plot(fine, np.sin(fine / 2))
        axes[b, 1].plot(np.arange(16), np.sin(np.arange(16) / 2), "o", ms=3)
        axes[b, 1].set_ylabel(f"k = {b}\n$\\lambda$ = 12.6")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncols=2)
    fig.draw_without_rendering()
    assert figures.ticks_off_integers(fig) == []  # the desktop: 0, 2, 4, ...
    small = figures.phone_figure(fig, (4.2, 8.0))
    small.draw_without_rendering()
    assert figures.ticks_off_integers(small) == []
    assert list(small.axes[0].get_xticks()) == [-5, 0, 5, 10, 15, 20]  # -5 and 20 outside the view
