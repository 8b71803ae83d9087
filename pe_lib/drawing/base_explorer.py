"""An explorer for the base and the width of the encoding: a static figure and its ipywidgets wrapper.

:func:`draw_base_overview` is a pure function of ``(d_model, base, length)`` that returns a matplotlib
figure; chapters show it directly. :func:`base_explorer` puts sliders in front of it for learners
running Jupyter; they change that one figure in place (see :mod:`pe_lib._live`) instead of drawing
a new one per slider move. matplotlib and ipywidgets are imported when these functions run, so
that ``import pe_lib`` stays light.
"""

from __future__ import annotations

import math

import numpy as np

from .._validate import check_base, check_d_model, check_positive_int
from ..analysis.base_analysis import base_summary, squared_distance
from ..encodings.frequencies import frequencies, wavelengths

FIGSIZE = (7.6, 3.6)  # inches at 100 dpi: the 760-pixel text column
# slider ranges of the explorer
MAX_D_MODEL = 1024
MAX_LENGTH = 4096
MIN_LOG10_BASE = 0.1
MAX_LOG10_BASE = 7


def _title(d_model: int, base: float, length: int, summary: dict) -> str:
    return (  # two lines: one would not fit the 760-pixel column at the sliders' widest values
        f"d_model = {d_model}, base = {base:g}: {summary['slow_pairs']} of {summary['pairs']} pairs\n"
        f"have a wavelength > L = {length}; neighbour distance {summary['neighbour_distance']:.3f}"
    )


def draw_base_overview(d_model: int, *, base: float = 10_000.0, length: int = 128):
    r"""Two panels for one ``(d_model, base, length)``; returns a ``matplotlib.figure.Figure``.

    Left: the wavelength :math:`\lambda_k = 2\pi\,\mathrm{base}^{2k/d}` of every pair on a log axis,
    with the sequence length ``L`` marked; pairs above the line turn less than once over ``L`` tokens.
    Right: :math:`\lVert\mathrm{PE}(p+\Delta)-\mathrm{PE}(p)\rVert` for :math:`0 \le \Delta \le L`,
    with the neighbour distance and :math:`\sqrt{d_\mathrm{model}}` (typical distance of unrelated
    positions) marked. The figure's suptitle states the counts from :func:`pe_lib.base_summary`.
    """
    from matplotlib.figure import Figure

    base = check_base(base)
    length = check_positive_int(length, name="length")
    lam = wavelengths(d_model, base=base)
    summary = base_summary(d_model, length, base=base)
    slow = lam > length
    fig = Figure(figsize=FIGSIZE, facecolor="white")
    ax_w, ax_d = fig.subplots(1, 2)
    k = np.arange(lam.size)
    fast_label, slow_label, length_label = _legend_labels(slow, length)
    ax_w.semilogy(k[~slow], lam[~slow], ".", color="tab:blue", label=fast_label)
    ax_w.semilogy(k[slow], lam[slow], ".", color="tab:gray", label=slow_label)
    ax_w.axhline(length, color="tab:red", linestyle="--", linewidth=1, label=length_label)
    ax_w.set_xlabel("pair index k")
    ax_w.set_ylabel("wavelength (positions)")
    # 9 pt: 10.2 CSS px on a phone, 8 pt would be 9.0. Where the L line runs depends on the sliders: no fixed
    # corner stays clear of it (at lower right it crossed the legend for L = 64, d_model 128), matplotlib's
    # "best" place does (issue 30, item 3; tests/drawing/test_base_explorer.py)
    ax_w.legend(loc="best", fontsize=9)
    delta = np.arange(length + 1)
    ax_d.plot(delta, np.sqrt(squared_distance(delta, d_model, base=base)), color="tab:blue", linewidth=1)
    ax_d.axhline(summary["neighbour_distance"], color="tab:green", linestyle=":", label="neighbour distance")
    ax_d.axhline(np.sqrt(d_model), color="tab:gray", linestyle="--", label="sqrt(d_model)")
    ax_d.set_xlabel("offset Δ (positions)")
    ax_d.set_ylabel("||PE(p+Δ) − PE(p)||")
    # at lower right the neighbour distance's line crossed the legend (issue 30, item 3): no corner suits every
    # setting, matplotlib's "best" place does
    ax_d.legend(loc="best", fontsize=9)
    fig.suptitle(_title(d_model, base, length, summary), fontsize=10)
    fig.tight_layout()
    return fig


def _legend_labels(slow: np.ndarray, length: int) -> list[str]:
    return [f"wavelength <= L ({np.sum(~slow)})", f"wavelength > L ({np.sum(slow)})", f"L = {length}"]


def _distance_curve(d_model: int, length: int, *, base: float = 10_000.0) -> np.ndarray:
    r""":math:`\lVert\mathrm{PE}(p+\Delta)-\mathrm{PE}(p)\rVert` for :math:`\Delta = 0 .. L`: shape ``(L + 1,)``.

    The same numbers as ``sqrt(squared_distance(arange(L + 1), d_model))`` (to about 1e-12), with
    :math:`O(\sqrt{L}\,d)` cosines instead of :math:`O(L\,d)`: write :math:`\Delta = aF + b` with
    :math:`F = \lceil\sqrt{L+1}\,\rceil`, then by the angle-addition identity

    .. math::

        \sum_k \cos\omega_k\Delta = \sum_k \cos(\omega_k aF)\cos(\omega_k b) - \sin(\omega_k aF)\sin(\omega_k b),

    which for all :math:`(a, b)` at once is the matrix product :math:`C c^\top - S s^\top`, and
    :math:`\lVert\cdot\rVert^2 = \sum_k 2 - 2\cos\omega_k\Delta`.
    """
    d_model = check_d_model(d_model)
    length = check_positive_int(length, name="length", minimum=0)
    omega = frequencies(d_model, base=base)
    n = length + 1
    fine = math.isqrt(n - 1) + 1  # F, with F^2 >= n
    coarse = -(-n // fine)  # A, with A F >= n
    big = (np.arange(coarse) * fine)[:, None] * omega  # omega_k a F, shape (A, d/2)
    small = np.arange(fine)[:, None] * omega  # omega_k b, shape (F, d/2)
    cos_sum = np.cos(big) @ np.cos(small).T - np.sin(big) @ np.sin(small).T  # sum_k cos(omega_k (aF + b))
    squared = d_model - 2.0 * cos_sum.ravel()[:n]  # sum_k 2 - 2 cos(omega_k Delta)
    return np.sqrt(np.maximum(squared, 0.0))  # rounding can leave -1e-13 at Delta = 0


def _update_base_overview(fig, d_model: int, *, base: float, length: int) -> None:
    """Change a figure made by :func:`draw_base_overview` in place to show ``(d_model, base, length)``.

    Same data, legend texts, title and axis limits as a new ``draw_base_overview(d_model, ...)`` (except
    the wavelength range for ``d_model = 2``: matplotlib autoscales a log axis holding a single point
    differently on a new figure and on an updated one; both ranges show the point).
    """
    lam = wavelengths(d_model, base=base)
    summary = base_summary(d_model, length, base=base)
    slow = lam > length
    k = np.arange(lam.size)
    ax_w, ax_d = fig.axes
    fast_line, slow_line, length_line = ax_w.lines
    fast_line.set_data(k[~slow], lam[~slow])
    slow_line.set_data(k[slow], lam[slow])
    length_line.set_ydata([length, length])
    for line, text, label in zip(ax_w.lines, ax_w.get_legend().get_texts(), _legend_labels(slow, length), strict=True):
        line.set_label(label)
        text.set_text(label)
    curve, neighbour, unrelated = ax_d.lines
    curve.set_data(np.arange(length + 1), _distance_curve(d_model, length, base=base))
    neighbour.set_ydata([summary["neighbour_distance"]] * 2)
    unrelated.set_ydata([np.sqrt(d_model)] * 2)
    for ax in (ax_w, ax_d):
        ax.relim()
        ax.autoscale_view()
    fig._suptitle.set_text(_title(d_model, base, length, summary))


def base_explorer(d_model: int = 512, *, base: float = 10_000.0, length: int = 128):
    """Sliders for ``d_model``, ``base`` (log scale) and ``L`` in front of :func:`draw_base_overview`.

    Returns an ``ipywidgets.VBox`` ``[sliders, summary text, picture]`` (the picture is an
    ``ipywidgets.Image``). Each change of a slider redraws the one figure in place; the latest
    numbers are in ``box.summary`` (a :func:`pe_lib.base_summary` dict) and the figure in
    ``box.figure``. ``box.sliders`` maps ``"d_model"``, ``"base"``, ``"length"`` to the controls.
    """
    import ipywidgets as widgets
    from matplotlib.ticker import NullFormatter

    from ._live import LiveFigure

    # a slider would silently clamp a value outside its range: refuse it instead
    d_model = check_d_model(d_model)
    length = check_positive_int(length, name="length")
    base = check_base(base)
    for name, value, top in (("d_model", d_model, MAX_D_MODEL), ("length", length, MAX_LENGTH),
                             ("base", base, 10.0**MAX_LOG10_BASE)):
        if value > top:
            raise ValueError(f"{name} must be at most {top:g} for the explorer's slider, got {value:g}")
    if base < 10.0**MIN_LOG10_BASE:
        raise ValueError(f"base must be at least {10.0**MIN_LOG10_BASE:.3g} for the explorer's slider, got {base:g}")
    d_model_slider = widgets.IntSlider(value=d_model, min=2, max=MAX_D_MODEL, step=2, description="d_model",
                                       continuous_update=False)
    base_slider = widgets.FloatLogSlider(value=base, base=10, min=MIN_LOG10_BASE, max=MAX_LOG10_BASE, step=0.1,
                                         description="base", continuous_update=False)
    length_slider = widgets.IntSlider(value=length, min=1, max=MAX_LENGTH, description="L", continuous_update=False)
    text = widgets.HTML()
    # laid out once (tight_layout) in a state with wide tick labels, then changed in place
    box_figure = draw_base_overview(MAX_D_MODEL, base=10.0**MAX_LOG10_BASE, length=MAX_LENGTH)
    # label decades only: labels of minor ticks (short ranges) would not fit the frozen layout
    box_figure.axes[0].yaxis.set_minor_formatter(NullFormatter())
    live = LiveFigure(box_figure, animated=[*box_figure.axes, box_figure._suptitle])
    box = widgets.VBox([widgets.HBox([d_model_slider, base_slider, length_slider]), text, live.image])
    box.sliders = {"d_model": d_model_slider, "base": base_slider, "length": length_slider}
    box.figure = box_figure

    def redraw(change=None) -> None:
        d, b, n = d_model_slider.value, base_slider.value, length_slider.value
        _update_base_overview(box_figure, d, base=b, length=n)
        live.show()
        box.summary = base_summary(d, n, base=b)
        text.value = (
            f"longest wavelength {box.summary['longest_wavelength']:.1f} positions; "
            + _title(d, b, n, box.summary)
        )

    for slider in box.sliders.values():
        slider.observe(redraw, names="value")
    redraw()
    return box
