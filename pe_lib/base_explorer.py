"""An explorer for the base and the width of the encoding: a static figure and its ipywidgets wrapper.

:func:`draw_base_overview` is a pure function of ``(d_model, base, length)`` that returns a matplotlib
figure; chapters show it directly. :func:`base_explorer` puts sliders in front of it for learners
running Jupyter. matplotlib and ipywidgets are imported when these functions run, so that
``import pe_lib`` stays light.
"""

from __future__ import annotations

import numpy as np

from ._validate import check_base, check_d_model, check_positive_int
from .base_analysis import base_summary, squared_distance
from .frequencies import wavelengths

FIGSIZE = (10.0, 3.6)
# slider ranges of the explorer
MAX_D_MODEL = 1024
MAX_LENGTH = 4096
MIN_LOG10_BASE = 0.1
MAX_LOG10_BASE = 7


def _title(d_model: int, base: float, length: int, summary: dict) -> str:
    return (
        f"d_model = {d_model}, base = {base:g}: {summary['slow_pairs']} of {summary['pairs']} pairs "
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
    ax_w.semilogy(k[~slow], lam[~slow], ".", color="tab:blue", label=f"wavelength <= L ({np.sum(~slow)})")
    ax_w.semilogy(k[slow], lam[slow], ".", color="tab:gray", label=f"wavelength > L ({np.sum(slow)})")
    ax_w.axhline(length, color="tab:red", linestyle="--", linewidth=1, label=f"L = {length}")
    ax_w.set_xlabel("pair index k")
    ax_w.set_ylabel("wavelength (positions)")
    ax_w.legend(loc="lower right", fontsize=8)
    delta = np.arange(length + 1)
    ax_d.plot(delta, np.sqrt(squared_distance(delta, d_model, base=base)), color="tab:blue", linewidth=1)
    ax_d.axhline(summary["neighbour_distance"], color="tab:green", linestyle=":", label="neighbour distance")
    ax_d.axhline(np.sqrt(d_model), color="tab:gray", linestyle="--", label="sqrt(d_model)")
    ax_d.set_xlabel("offset Δ (positions)")
    ax_d.set_ylabel("||PE(p+Δ) − PE(p)||")
    ax_d.legend(loc="lower right", fontsize=8)
    fig.suptitle(_title(d_model, base, length, summary), fontsize=10)
    fig.tight_layout()
    return fig


def base_explorer(d_model: int = 512, *, base: float = 10_000.0, length: int = 128):
    """Sliders for ``d_model``, ``base`` (log scale) and ``L`` in front of :func:`draw_base_overview`.

    Returns an ``ipywidgets.VBox`` ``[sliders, summary text, figure output]``. Each change of a slider
    redraws; the latest numbers are in ``box.summary`` (a :func:`pe_lib.base_summary` dict) and the
    latest figure in ``box.figure``. ``box.sliders`` maps ``"d_model"``, ``"base"``, ``"length"`` to the
    controls.
    """
    import ipywidgets as widgets
    from IPython.display import display

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
    out = widgets.Output()
    box = widgets.VBox([widgets.HBox([d_model_slider, base_slider, length_slider]), text, out])
    box.sliders = {"d_model": d_model_slider, "base": base_slider, "length": length_slider}

    def redraw(change=None) -> None:
        d, b, n = d_model_slider.value, base_slider.value, length_slider.value
        box.figure = draw_base_overview(d, base=b, length=n)
        box.summary = base_summary(d, n, base=b)
        text.value = (
            f"longest wavelength {box.summary['longest_wavelength']:.1f} positions; "
            + _title(d, b, n, box.summary)
        )
        out.clear_output(wait=True)
        with out:
            display(box.figure)

    for slider in box.sliders.values():
        slider.observe(redraw, names="value")
    redraw()
    return box
