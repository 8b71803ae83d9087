r"""The encoding as a clock with ``d_model / 2`` hands, drawn: a static figure, an ipywidgets slider,
and the same clock as a kernel-free player for the website (chapter 5).

The hands' maths (:func:`pe_lib.hand_positions`, the direction they turn) is in
:mod:`pe_lib.encodings.hands`; the player's HTML in :mod:`pe_lib.drawing.player`.
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from .._validate import check_base, check_d_model, check_finite_real, check_positions, check_positive_int
from ..encodings.frequencies import frequencies
from ..encodings.hands import embedded_positions
from .player import player_html, png_frames
from .plots import new_figure


def _check_pairs(pairs, d_model: int) -> np.ndarray:
    k = np.asarray(pairs)
    if k.ndim != 1 or k.size == 0 or k.dtype.kind not in "iu":
        raise ValueError(f"pairs must be a non-empty 1-D list of integer pair indices, got {pairs!r}")
    if k.min() < 0 or k.max() >= d_model // 2:
        raise ValueError(f"pair indices must lie in 0 .. d_model/2 - 1 = {d_model // 2 - 1}, got {k.tolist()}")
    return k


def draw_clock(
    pos: float,
    d_model: int,
    *,
    pairs=(0, 1, 2, 3),
    base: float = 10_000.0,
    trail: int = 8,
    ncols: int = 4,
    width: float = 7.6,
    height: float | None = None,
    dpi: int = 100,
) -> Figure:
    r"""One dial per pair ``k`` in ``pairs``: the hand from the centre to
    :math:`(\sin pos\,\omega_k, \cos pos\,\omega_k)`.

    Each dial is the unit circle with faint axes through its centre (horizontal: sin, vertical: cos), 12 o'clock
    marked, the hand drawn as a line ending in a dot, and the tips at up to ``trail`` earlier integer
    positions, ``pos - trail .. pos - 1`` but none before position 0 (where a sequence starts), as
    dots that fade with age: they show the direction of travel. Titles give ``k``,
    :math:`\omega_k` and the wavelength. Returns the figure (``width`` x ``height`` inches at ``dpi``).
    """
    pos = check_finite_real(pos, name="pos")
    d_model = check_d_model(d_model)
    k = _check_pairs(pairs, d_model)
    trail = check_positive_int(trail, name="trail", minimum=0)
    ncols = check_positive_int(ncols, name="ncols")
    omega = frequencies(d_model, base=base)[k]
    nrows = -(-k.size // ncols)
    ncols = min(ncols, k.size)
    height = height if height is not None else 2.9 * nrows  # three lines of title above each dial
    fig, axes = new_figure(nrows, ncols, width=width, height=height, dpi=dpi, squeeze=False)
    circle = np.linspace(0.0, 2 * np.pi, 121)
    for ax, kk, w in zip(axes.ravel(), k, omega, strict=False):
        # the dial, below the moving trail (zorder 1) and hand (zorder 2): a frame that redraws only
        # the moving parts over a picture of the dial then shows the same pixels as a full drawing
        ax.plot(np.sin(circle), np.cos(circle), color="0.7", lw=1, zorder=0.5)
        ax.plot([-1.15, 1.15], [0, 0], color="0.88", lw=0.8, zorder=0.5)  # horizontal axis: sin
        ax.plot([0, 0], [-1.15, 1.15], color="0.88", lw=0.8, zorder=0.5)  # vertical axis: cos
        ax.plot([0, 0], [0.88, 1.12], color="0.3", lw=1.5, zorder=0.5)  # 12 o'clock: pos = 0
        tip, past = _hand(pos, w, trail)
        if trail:
            ax.scatter(past[:, 0], past[:, 1], s=14, c=_shades(trail)[trail - len(past):], cmap="Greys",
                       vmin=0, vmax=1, gid="trail")
        ax.plot([0, tip[0]], [0, tip[1]], color="C3", lw=2.5, marker="o", markevery=[1], ms=5, zorder=2, gid="hand")
        # three short lines, so that a dial can be narrow and its labels large (issue 19, item 10)
        ax.set_title(f"k = {kk}\n$\\omega$ = {w:.3g}\n$\\lambda$ = {2 * np.pi / w:.1f}")
        ax.set_xlim(-1.2, 1.2)
        ax.set_ylim(-1.2, 1.2)
        ax.set_aspect("equal")
        ax.set_axis_off()
    for ax in axes.ravel()[k.size :]:
        ax.set_visible(False)
    fig.suptitle(_clock_title(pos, d_model))
    return fig


def _shades(trail: int) -> np.ndarray:
    """Grey levels of the trail dots, oldest (light) to newest (dark): shape ``(trail,)``."""
    return np.linspace(0.35, 0.8, trail)


def _hand(pos: float, omega: float, trail: int) -> tuple[tuple[float, float], np.ndarray]:
    """The tip (sin pos w, cos pos w) of one hand, and the tips at the earlier positions
    ``pos - trail .. pos - 1`` that are >= 0, oldest first: shape ``(m, 2)`` with ``m <= trail``."""
    past = pos - np.arange(trail, 0, -1)  # pos - trail .. pos - 1
    past = past[past >= 0]  # a sequence starts at position 0
    return (np.sin(pos * omega), np.cos(pos * omega)), np.column_stack([np.sin(past * omega), np.cos(past * omega)])


def _clock_title(pos: float, d_model: int) -> str:
    return f"pos = {pos:g}, $d_{{model}}$ = {d_model}  (horizontal: sin, vertical: cos)"


def _moving_artists(fig: Figure) -> list:
    """What :func:`_update_clock` changes, in drawing order: each dial's trail, then its hand; the title."""
    found = [a for ax in fig.axes for a in (*ax.collections, *ax.lines) if a.get_gid() in ("hand", "trail")]
    return [*found, fig._suptitle]


def _update_clock(fig: Figure, pos: float, d_model: int, pairs, base: float, trail: int) -> None:
    """Move the hands of a figure made by :func:`draw_clock` (same ``d_model``, ``pairs``, ``base``,
    ``trail``) to ``pos``: the same hands, trails and title as a new ``draw_clock(pos, ...)``."""
    omega = frequencies(d_model, base=base)[np.asarray(pairs)]
    for ax, w in zip(fig.axes, omega, strict=False):
        tip, past = _hand(pos, w, trail)
        for artist in (*ax.lines, *ax.collections):
            if artist.get_gid() == "hand":
                artist.set_data([0, tip[0]], [0, tip[1]])
            elif artist.get_gid() == "trail":
                artist.set_offsets(past)
                artist.set_array(_shades(trail)[trail - len(past):])
    fig._suptitle.set_text(_clock_title(pos, d_model))


def draw_word_circles(words, positions, *, base: float = 10_000.0, width: float = 7.6, height: float = 4.2) -> Figure:
    r"""The first two coordinates of :math:`e + \mathrm{PE}(pos)` for each word, position by position.

    ``words`` maps a label to the word's embedding (shape ``(d,)``, ``d`` even). For each word the
    figure shows its own point :math:`(e_0, e_1)`, the unit circle around it on which every
    :math:`e + \mathrm{PE}(pos)` lands in this slice, and the points for ``positions`` numbered by
    position. Returns the figure.
    """
    items = list(dict(words).items())
    if not items:
        raise ValueError("words must map at least one label to an embedding, got none")
    pos = check_positions(positions)
    fig, ax = new_figure(width=width, height=height)
    circle = np.linspace(0.0, 2 * np.pi, 181)
    for colour, (label, x) in enumerate(items):
        points = embedded_positions(x, pos, base=base)[:, :2]  # (e0 + sin pos, e1 + cos pos)
        centre = np.asarray(x, dtype=np.float64)[:2]
        ax.plot(centre[0] + np.sin(circle), centre[1] + np.cos(circle), color=f"C{colour}", lw=0.8, alpha=0.5)
        ax.plot(*centre, "x", color=f"C{colour}", ms=8, mew=2, label=f"{label} (no position)")
        ax.plot(points[:, 0], points[:, 1], "o", color=f"C{colour}", ms=4)
        for p, (px, py) in zip(pos, points, strict=True):
            ax.annotate(f"{p:g}", (px, py), textcoords="offset points", xytext=(3, 3), fontsize="small",
                        color=f"C{colour}")
    ax.set_aspect("equal")
    ax.set_xlabel("dimension 0: $e_0 + \\sin(pos)$")
    ax.set_ylabel("dimension 1: $e_1 + \\cos(pos)$")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return fig


def clock_widget(
    d_model: int = 16,
    *,
    pairs=(0, 1, 2, 3, 4, 5, 6, 7),
    base: float = 10_000.0,
    max_pos: int = 200,
):
    """An ipywidgets slider over ``pos`` (0 .. ``max_pos``) that redraws :func:`draw_clock`.

    Returns the ``ipywidgets.interactive`` box: ``.children[0]`` is the position slider,
    ``.children[1]`` the picture (an ``ipywidgets.Image``) and ``.result`` the figure it shows. The
    dials are drawn once; a slider move only redraws the hands, their trails and the title, fast
    enough to follow the slider while it is dragged. Needs a running kernel (hidden on the website);
    the stored output of a notebook says so in its text form (what Jupyter shows before the cell runs).
    """
    import ipywidgets as widgets

    from ._live import LiveFigure

    d_model = check_d_model(d_model)
    pairs = tuple(int(k) for k in _check_pairs(list(pairs), d_model))
    base = check_base(base)
    max_pos = check_positive_int(max_pos, name="max_pos")
    trail = 8  # draw_clock's default
    fig = draw_clock(0, d_model, pairs=pairs, base=base, trail=trail)
    live = LiveFigure(fig, animated=_moving_artists(fig))

    def show(pos):
        _update_clock(fig, pos, d_model, pairs, base, trail)
        live.show()
        return fig

    class ClockWidget(widgets.interactive):
        def __repr__(self):  # what a front end shows for the widget when no kernel is running
            return f"Clock widget for d_model = {d_model}, positions 0 to {max_pos}: run this cell (it needs a kernel)."

    slider = widgets.IntSlider(value=0, min=0, max=max_pos, step=1, description="pos")
    box = ClockWidget(show, pos=slider)
    box.children = (slider, live.image, box.out)
    return box


# ---- the kernel-free stand-in: pre-rendered PNG frames, a player where JavaScript runs --------------
# matplotlib's Animation.to_jshtml names its elements with a random uuid4 (so re-running a notebook
# changes its output), loads icon fonts from a CDN (a request that leaves the site), and shows dead
# buttons where its script does not run. JupyterLab runs no script of a notebook it has not trusted
# (one opened from disk), and its sanitizer keeps only plain HTML with a list of inline styles. So the
# markup alone is a strip of frames that scrolls sideways, which works everywhere; the script, where
# it runs (the website; Jupyter once the cell has run in the reader's session), turns the strip into
# a player with a slider, prev/play/next buttons and the frame's label. Ids are fixed and no file
# outside the page is requested.
def clock_animation_html(
    positions,
    d_model: int,
    *,
    pairs=(0, 1, 2, 3),
    base: float = 10_000.0,
    html_id: str = "pe_clock",
    dpi: int = 64,
    width: float = 7.6,
    height: float | None = None,
    interval_ms: int = 300,
) -> str:
    """The clock of :func:`draw_clock` at each position, as a player that also works without
    JavaScript (see :func:`player_html`).

    The dials are drawn once; each frame redraws only the hands, trails and title. Deterministic: the
    same arguments give the same bytes. Returns the HTML string.
    """
    pos = check_positions(positions)
    d_model = check_d_model(d_model)
    k = _check_pairs(pairs, d_model)
    trail = 8  # draw_clock's default
    fig = draw_clock(pos[0], d_model, pairs=k, base=base, trail=trail, width=width, height=height, dpi=dpi)
    frames = png_frames(fig, lambda p: _update_clock(fig, p, d_model, k, base, trail), pos,
                        animated=_moving_artists(fig))
    labels = [f"pos = {p:g}" for p in pos]
    # the smallest text of the frames (the titles; the dials have no other text), in frame pixels
    sizes = [fig._suptitle.get_fontsize()] + [ax.title.get_fontsize() for ax in fig.axes if ax.get_visible()]
    return player_html(frames, labels, html_id=html_id, interval_ms=interval_ms,
                       alt=f"clock hands of d_model = {d_model}", text_px=min(sizes) * dpi / 72)
