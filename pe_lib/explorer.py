r"""An explorer of the encoding table: sequence length, ``d_model`` and ``base`` on sliders.

:func:`explorer_summary` computes what the figure shows, :func:`explorer_figure` draws it (heat map
of the table next to the wavelengths :math:`\lambda_k = 2\pi\,\mathrm{base}^{2k/d_\mathrm{model}}` on a
log axis, with the sequence length marked), and :func:`explorer_widget` puts both on sliders.
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from ._validate import check_base, check_d_model, check_positive_int, check_table_size
from .frequencies import wavelengths
from .plots import heatmap, new_figure
from .sinusoidal import sinusoidal


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
    fig, (left, right) = new_figure(1, 2, width=9.0, height=3.6, width_ratios=[3, 2])
    heatmap(sinusoidal(n_positions, d_model, base=base), left,
            title=f"{n_positions} positions x {d_model} dimensions, base {base:g}")
    k = np.arange(info["pairs"])
    right.semilogy(k, wavelengths(d_model, base=base), ".", ms=3, color="C0", label=r"$\lambda_k$")
    right.axhline(n_positions, color="C3", lw=1, label=f"sequence length {n_positions}")
    right.set_xlabel("pair index $k$")
    right.set_ylabel("wavelength (tokens)")
    right.set_title(f"{info['full_turns']} of {info['pairs']} pairs turn fully within the sequence", fontsize=9)
    right.legend(fontsize=8, loc="upper left")
    return fig


def explorer_widget(n_positions: int = 64, d_model: int = 128, base: float = 10_000.0):
    """Sliders for sequence length, ``d_model`` and ``base`` (log scale) redrawing :func:`explorer_figure`.

    Returns the ``ipywidgets.interactive`` box; ``.children[:3]`` are the sliders and ``.result`` is
    the latest figure. Needs a running kernel (the website shows static figures instead).
    """
    import ipywidgets as widgets

    n_positions = check_positive_int(n_positions, name="n_positions")
    d_model = check_d_model(d_model)
    base = check_base(base)
    controls = {
        "n_positions": widgets.IntSlider(value=n_positions, min=1, max=512, step=1, description="length",
                                         continuous_update=False),
        "d_model": widgets.IntSlider(value=d_model, min=2, max=1024, step=2, description="d_model",
                                     continuous_update=False),
        "base": widgets.FloatLogSlider(value=base, base=10, min=0.5, max=6, step=0.1, description="base",
                                       continuous_update=False),
    }
    return widgets.interactive(explorer_figure, **controls)
