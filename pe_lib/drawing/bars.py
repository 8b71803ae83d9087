r"""The book's opening picture: a few encoding vectors as rows of bars, each pair's rotation on a dial.

Row :math:`pos` shows :math:`\mathrm{PE}(pos)` for a small :math:`d_\mathrm{model}`. Its columns come
in pairs :math:`(2k, 2k+1)`, the sine and the cosine of one angle (Vaswani et al. 2017, section 3.5):

.. math::

    \big(\mathrm{PE}(pos, 2k),\ \mathrm{PE}(pos, 2k+1)\big) = \big(\sin(pos\,\omega_k),\ \cos(pos\,\omega_k)\big),
    \qquad \omega_k = \mathrm{base}^{-2k/d_\mathrm{model}}.

So each pair is the point of a unit circle at angle :math:`pos\,\omega_k`, drawn here as an arrow on a
small dial beside its two bars: the bars are the arrow's coordinates. Going down the rows, every arrow
turns by its own fixed step :math:`\omega_k` per token: fast on the left, barely at all on the right.
"""

from __future__ import annotations

import matplotlib
import numpy as np
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.patches import Circle

from .._validate import check_base, check_d_model, check_positions
from ..encodings.frequencies import frequencies
from ..encodings.sinusoidal import sinusoidal
from .plots import TABLE_CMAP, new_figure

# Drawing units (the axes have equal aspect): a value of 1 is a bar BAR_UNIT tall, a dial has radius DIAL_RADIUS.
BAR_UNIT = 0.42
DIAL_RADIUS = 0.42
ROW_HEIGHT = 1.15
GROUP_WIDTH = 2.15  # sin bar, cos bar, dial
BAR_WIDTH = 0.34


def encoding_bars(
    positions=4,
    d_model: int = 8,
    *,
    base: float = 10_000.0,
    width: float = 6.4,
    dpi: int = 100,
    compact: bool = False,
) -> Figure:
    r"""Draw :math:`\mathrm{PE}(pos)` for each of ``positions`` as a row of coloured bars with a dial per pair.

    ``positions``: an int ``n`` (rows for positions ``0 .. n-1``) or a 1-D array-like of at most 8
    positions (with ``d_model=8``, ``[0, 1, 2, 10, 100]`` shows that pair ``k+1`` at ``10 pos``
    repeats pair ``k`` at ``pos``: ``base**(2/d_model)`` is 10). ``d_model``: an even number of at
    most 12 (so at most 6 pairs fit across the page).
    Each pair ``k`` gets three things: the bar of column ``2k`` (:math:`\sin pos\,\omega_k`), the bar
    of column ``2k+1`` (:math:`\cos pos\,\omega_k`), both ``BAR_UNIT`` tall per unit of value, up
    from the row's baseline when positive, and coloured on the heat maps' scale ``[-1, 1]``; and a
    dial whose arrow, from the centre, is ``DIAL_RADIUS`` times
    :math:`(\sin pos\,\omega_k, \cos pos\,\omega_k)`, the sine horizontal as on chapter 5's clock: the
    angle :math:`pos\,\omega_k` measured clockwise from "12 o'clock". The values are those of :func:`pe_lib.sinusoidal`.

    ``compact``: the same picture for a phone's column (``width=4.2``): the bars are labelled "s" and
    "c", the rows by their position under a "pos" heading, and the smaller titles use the book's
    10 and 12 pt, so that no two labels touch at 420 px.

    Returns a ``width``-inch wide :class:`~matplotlib.figure.Figure` with one axes; its bars are
    ``Rectangle`` patches with gid ``"PE(pos,j)"`` and its arrows one ``Quiver`` (``X, Y`` the dial
    centres, ``U, V`` the arrows), in row-major order (position, then pair).
    """
    pos = check_positions(positions)
    if pos.size > 8:
        raise ValueError(f"positions must hold at most 8 positions (one row each), got {pos.size}")
    d_model = check_d_model(d_model)
    if d_model > 12:
        raise ValueError(f"d_model must be at most 12 (6 pairs fit across the page), got {d_model}")
    base = check_base(base)
    if not isinstance(compact, bool):
        raise TypeError(f"compact must be True or False, got {type(compact).__name__}")
    table = sinusoidal(pos, d_model, base=base)
    omega = frequencies(d_model, base=base)
    n_pairs = d_model // 2
    label_width = 1.0 if compact else 1.5
    header = 1.3
    title_pt, omega_pt, row_pt = (12, 10, 12) if compact else (14, 12, 14)
    sin_label, cos_label = ("s", "c") if compact else ("sin", "cos")
    total_w = label_width + n_pairs * GROUP_WIDTH
    total_h = header + pos.size * ROW_HEIGHT
    height = round(width * dpi * total_h / total_w) / dpi  # whole pixels, so that a 2x PNG is exactly twice
    fig, ax = new_figure(width=width, height=height, dpi=dpi)
    ax.set_xlim(0, total_w)
    ax.set_ylim(-total_h + header, header)
    ax.set_aspect("equal")
    ax.set_axis_off()
    colours = matplotlib.colormaps[TABLE_CMAP]
    centres, arrows, guides = [], [], []
    for k in range(n_pairs):
        x0 = label_width + k * GROUP_WIDTH
        ax.text(x0 + 0.95, 1.02, f"pair {k}", ha="center", va="center", fontsize=title_pt, fontweight="bold")
        ax.text(x0 + 0.95, 0.55, rf"$\omega_{k}$ = {omega[k]:.3g}", ha="center", va="center", fontsize=omega_pt)
        ax.text(x0 + 0.2, 0.08, sin_label, ha="center", va="center", fontsize=10, color="0.3")
        ax.text(x0 + 0.62, 0.08, cos_label, ha="center", va="center", fontsize=10, color="0.3")
    if compact:
        ax.text(0.05, 0.08, "pos", ha="left", va="center", fontsize=10, color="0.3")
    for r, p in enumerate(pos):
        y = -(r + 0.5) * ROW_HEIGHT
        ax.text(0.05, y, f"{p:g}" if compact else f"pos {p:g}", ha="left", va="center", fontsize=row_pt)
        for k in range(n_pairs):
            x0 = label_width + k * GROUP_WIDTH
            guides.append([(x0 - 0.05, y), (x0 + 0.87, y)])  # the bars' zero line
            for c, j in enumerate((2 * k, 2 * k + 1)):
                v = table[r, j]
                rect = ax.bar(
                    x0 + 0.2 + 0.42 * c, BAR_UNIT * v, width=BAR_WIDTH, bottom=y,
                    color=colours((v + 1) / 2), edgecolor="0.25", linewidth=0.6,
                )[0]
                rect.set_gid(f"PE({p:g},{j})")
            cx = x0 + 1.5
            ax.add_patch(Circle((cx, y), DIAL_RADIUS, fill=False, edgecolor="0.55", linewidth=0.8))
            guides.append([(cx, y), (cx + DIAL_RADIUS, y)])  # angle 0
            centres.append((cx, y))
            arrows.append((table[r, 2 * k], table[r, 2 * k + 1]))  # (sin, cos): chapter 5's clock hand
    ax.add_collection(LineCollection(guides, colors="0.65", linewidths=0.6))
    centres, arrows = np.array(centres), DIAL_RADIUS * np.array(arrows)
    ax.quiver(
        centres[:, 0], centres[:, 1], arrows[:, 0], arrows[:, 1],
        angles="xy", scale_units="xy", scale=1, color="black",
        width=0.005, headwidth=3.2, headlength=3.6, headaxislength=3.2,
    )
    return fig
