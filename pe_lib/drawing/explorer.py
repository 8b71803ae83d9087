r"""An explorer of the encoding table: sequence length, ``d_model`` and ``base`` on sliders.

:func:`explorer_summary` computes what the figure shows, :func:`explorer_figure` draws it (heat map
of the table next to the wavelengths :math:`\lambda_k = 2\pi\,\mathrm{base}^{2k/d_\mathrm{model}}` on a
log axis, with the sequence length marked), and :func:`explorer_widget` puts both on sliders. The
widget keeps one figure and changes its artists in place (see :mod:`pe_lib._live`), so that a
slider move redraws in tens of milliseconds instead of building a new figure.
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator, NullFormatter

from .._validate import check_base, check_d_model, check_positive_int, check_table_size
from ..encodings.frequencies import wavelengths
from ..encodings.sinusoidal import sinusoidal
from .plots import heatmap, new_figure

# the width of the book's text column (7.6 inches at 100 dpi, pe_lib.book.figures.MAX_WIDTH_PX)
FIGURE_WIDTH = 7.6
# slider ranges of the widget
MAX_LENGTH = 512
MAX_D_MODEL = 1024
MIN_LOG10_BASE, MAX_LOG10_BASE = 0.5, 6


def explorer_summary(n_positions: int, d_model: int, base: float = 10_000.0) -> dict:
    r"""Facts about the table of ``n_positions`` x ``d_model`` with the given ``base``.

    Returns a dict with ``pairs`` (:math:`d_\mathrm{model}/2`), ``full_turns`` (the number of pairs
    whose wavelength is at most ``n_positions``, i.e. that complete a full turn within the
    sequence), ``shortest`` and ``longest`` wavelength, and ``ratio`` (the factor
    :math:`\mathrm{base}^{2/d_\mathrm{model}}` between neighbouring wavelengths; ``nan`` for one pair).
    """
    n_positions = check_positive_int(n_positions, name="n_positions")
    d_model = check_d_model(d_model)
    base = check_base(base)
    lam = wavelengths(d_model, base=base)
    return {
        "pairs": lam.size,
        "full_turns": int(np.count_nonzero(lam <= n_positions)),
        "shortest": float(lam[0]),
        "longest": float(lam[-1]),
        "ratio": float(lam[1] / lam[0]) if lam.size > 1 else float("nan"),
    }


# ---- the texts of the figure: one place, used by the figure and by the widget's in-place update ------
def _table_title(n_positions: int, d_model: int, base: float) -> str:
    return f"{n_positions} positions x {d_model} dimensions, base {base:g}"


def _turns_title(info: dict) -> str:
    # two short lines: one long line overran the right edge of the figure (issue 11)
    return f"{info['full_turns']} of {info['pairs']} pairs turn\nfully within the sequence"


def _length_label(n_positions: int) -> str:
    return f"sequence length {n_positions}"


def _set_limits(left, right, n_positions: int, d_model: int, lam: np.ndarray) -> None:
    """Axis limits of both panels, set explicitly so that a new figure and an updated one agree.

    The right panel spans every pair (-0.5 .. pairs - 0.5) and, on its log axis, the wavelengths and
    the sequence length with a margin of a factor 1.5 on each side, and above them a quarter of the
    axis left empty for the legend (it stood on the last wavelengths, and on the sequence length's line
    where that is the largest value: issue 30, item 3).
    """
    left.set_xlim(-0.5, d_model - 0.5)
    left.set_ylim(n_positions - 0.5, -0.5)  # row 0 on top, as imshow draws it
    right.set_xlim(-0.5, lam.size - 0.5)
    low, high = min(lam[0], n_positions) / 1.5, max(lam[-1], n_positions) * 1.5
    right.set_ylim(low, high * (high / low) ** (1 / 3))  # the data in the lower 3/4 of the log axis


def explorer_figure(n_positions: int, d_model: int, base: float = 10_000.0) -> Figure:
    """Heat map of the table (left) and its wavelengths on a log axis (right). Returns the figure.

    The right panel marks ``n_positions``: pairs below the line turn at least once within the
    sequence, pairs above it change slowly over it.
    """
    n_positions = check_positive_int(n_positions, name="n_positions")
    d_model = check_d_model(d_model)
    base = check_base(base)
    check_table_size(n_positions, d_model)
    info = explorer_summary(n_positions, d_model, base)
    fig, (left, right) = new_figure(1, 2, width=FIGURE_WIDTH, height=3.8, width_ratios=[3, 2])
    heatmap(sinusoidal(n_positions, d_model, base=base), left, title=_table_title(n_positions, d_model, base))
    k = np.arange(info["pairs"])
    lam = wavelengths(d_model, base=base)
    right.semilogy(k, lam, ".", ms=3, color="C0", label=r"$\lambda_k$")
    right.axhline(n_positions, color="C3", lw=1, label=_length_label(n_positions))
    right.set_xlabel("pair index $k$")
    right.set_ylabel("wavelength (tokens)")
    right.set_title(_turns_title(info))
    right.legend(loc="upper left")
    for axis in (left.xaxis, left.yaxis, right.xaxis):
        # whole positions, dimensions and pairs only, and few enough labels to stay apart at any size
        axis.set_major_locator(MaxNLocator(nbins=5, integer=True, min_n_ticks=1))
    _set_limits(left, right, n_positions, d_model, lam)
    return fig


def _update_explorer(fig: Figure, n_positions: int, d_model: int, base: float) -> None:
    """Change a figure made by :func:`explorer_figure` in place to show ``(n_positions, d_model, base)``.

    Same data, texts and axis limits as a new ``explorer_figure(n_positions, d_model, base)``.
    """
    info = explorer_summary(n_positions, d_model, base)
    left, right = fig.axes[:2]
    image = left.images[0]
    image.set_data(sinusoidal(n_positions, d_model, base=base))
    image.set_extent((-0.5, d_model - 0.5, n_positions - 0.5, -0.5))  # imshow's extent, row 0 on top
    left.set_title(_table_title(n_positions, d_model, base))
    lam = wavelengths(d_model, base=base)
    lam_line, length_line = right.lines[:2]
    lam_line.set_data(np.arange(info["pairs"]), lam)
    length_line.set_ydata([n_positions, n_positions])
    length_line.set_label(_length_label(n_positions))
    right.get_legend().get_texts()[1].set_text(_length_label(n_positions))
    right.set_title(_turns_title(info))
    _set_limits(left, right, n_positions, d_model, lam)


def explorer_widget(n_positions: int = 64, d_model: int = 128, base: float = 10_000.0):
    """Sliders for sequence length, ``d_model`` and ``base`` (log scale) redrawing :func:`explorer_figure`.

    Returns the ``ipywidgets.interactive`` box; ``.children[:3]`` are the sliders, ``.children[3]``
    the picture (an ``ipywidgets.Image``) and ``.result`` the figure it shows, which every slider
    move updates in place. Needs a running kernel (the website shows static figures instead).
    """
    import ipywidgets as widgets

    from ._live import LiveFigure

    n_positions = check_positive_int(n_positions, name="n_positions")
    d_model = check_d_model(d_model)
    base = check_base(base)
    controls = {
        "n_positions": widgets.IntSlider(value=n_positions, min=1, max=MAX_LENGTH, step=1, description="length",
                                         continuous_update=False),
        "d_model": widgets.IntSlider(value=d_model, min=2, max=MAX_D_MODEL, step=2, description="d_model",
                                     continuous_update=False),
        "base": widgets.FloatLogSlider(value=base, base=10, min=MIN_LOG10_BASE, max=MAX_LOG10_BASE, step=0.1,
                                       description="base", continuous_update=False),
    }
    # laid out once in the state with the widest tick labels, then changed in place
    fig = explorer_figure(MAX_LENGTH, MAX_D_MODEL, 10.0**MAX_LOG10_BASE)
    # label decades only: labels of minor ticks (short ranges) would not fit the frozen layout
    fig.axes[1].yaxis.set_minor_formatter(NullFormatter())
    live = LiveFigure(fig, animated=fig.axes[:2])  # the colorbar never changes

    def show(n_positions, d_model, base):
        _update_explorer(fig, n_positions, d_model, base)
        live.show()
        return fig

    box = widgets.interactive(show, **controls)
    box.children = (*box.children[:3], live.image, box.out)
    return box
