r"""The encoding as a clock with ``d_model / 2`` hands.

Pair ``k`` of PE(pos) is the point :math:`h_k(pos) = (\sin pos\,\omega_k,\ \cos pos\,\omega_k)` on the
unit circle. Drawn with :math:`x = \sin` and :math:`y = \cos`, the hand starts at 12 o'clock and,
since the cross product of successive points is

.. math::

    x_t\,y_{t+s} - y_t\,x_{t+s} = \sin(t\omega_k)\cos((t+s)\omega_k) - \cos(t\omega_k)\sin((t+s)\omega_k)
                                = -\sin(s\,\omega_k),

it turns clockwise at :math:`\omega_k` radians per token whenever :math:`0 < s\,\omega_k \bmod 2\pi < \pi`.

This module computes the hands, draws them (static figure, ipywidgets slider, and a kernel-free
JavaScript player whose HTML is byte-for-byte reproducible).
"""

from __future__ import annotations

import base64
import html
import io
import json
import re

import numpy as np
from matplotlib.figure import Figure

from ._validate import check_base, check_d_model, check_finite_real, check_positions, check_positive_int
from .frequencies import frequencies
from .plots import new_figure
from .sinusoidal import sinusoidal

CLOCKWISE, COUNTERCLOCKWISE, STILL = "clockwise", "counterclockwise", "still"


def hand_positions(positions, d_model: int, *, base: float = 10_000.0) -> np.ndarray:
    r"""The clock hands of each position: shape ``(n, d_model // 2, 2)``.

    ``[p, k]`` is the point :math:`(\sin pos_p\,\omega_k,\ \cos pos_p\,\omega_k)` (x = sin, y = cos),
    i.e. the columns ``2k, 2k+1`` of the paper's (interleaved) table.
    """
    table = sinusoidal(positions, d_model, base=base)  # interleaved: [sin w0 p, cos w0 p, sin w1 p, ...]
    return table.reshape(table.shape[0], -1, 2)


def cross_z(points) -> np.ndarray:
    r"""z-component of the cross product of successive 2-D points: :math:`x_t y_{t+1} - y_t x_{t+1}`.

    ``points`` has shape ``(n, ..., 2)`` (time on the first axis). Returns shape ``(n - 1, ...)``:
    negative where the point turns clockwise about the origin, positive where counterclockwise.
    """
    p = np.asarray(points, dtype=np.float64)
    if p.ndim < 2 or p.shape[-1] != 2 or p.shape[0] < 2:
        raise ValueError(f"points must have shape (n >= 2, ..., 2), got {p.shape}")
    x, y = p[..., 0], p[..., 1]
    return x[:-1] * y[1:] - y[:-1] * x[1:]  # x_t y_{t+1} - y_t x_{t+1}


def rotation_sense(points, *, atol: float = 1e-12) -> np.ndarray:
    """``"clockwise"``, ``"counterclockwise"`` or ``"still"`` for each step, from :func:`cross_z`.

    A step whose ``|cross_z| <= atol`` (no turn, or exactly half a turn) is ``"still"``.
    Returns a string array of shape ``(n - 1, ...)``.
    """
    z = cross_z(points)
    atol = check_finite_real(atol, name="atol")
    return np.where(z < -atol, CLOCKWISE, np.where(z > atol, COUNTERCLOCKWISE, STILL))


def embedded_positions(embedding, positions, *, base: float = 10_000.0) -> np.ndarray:
    r"""The inputs of the first layer for one word: :math:`x + \mathrm{PE}(pos)` for each position.

    ``embedding``: the word's vector, shape ``(d,)`` with ``d`` even. Returns shape ``(n, d)``.
    Every pair ``(2k, 2k+1)`` of the result lies on the unit circle around the same pair of ``x``.
    """
    x = np.asarray(embedding, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"embedding must be one vector of shape (d,), got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("embedding must be finite, got NaN or infinity among its values")
    d = check_d_model(x.size, name="the length of embedding")
    return x + sinusoidal(positions, d, base=base)  # x + PE(pos)


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
    width: float = 8.0,
    height: float | None = None,
) -> Figure:
    r"""One dial per pair ``k`` in ``pairs``: the hand :math:`(\sin pos\,\omega_k, \cos pos\,\omega_k)`.

    Each dial is the unit circle with the hand drawn from the centre, 12 o'clock marked, and the
    tips of the previous ``trail`` integer positions as fading dots (which show the direction of
    travel). Titles give ``k``, :math:`\omega_k` and the wavelength. Returns the figure.
    """
    pos = check_finite_real(pos, name="pos")
    d_model = check_d_model(d_model)
    k = _check_pairs(pairs, d_model)
    trail = check_positive_int(trail, name="trail", minimum=0)
    ncols = check_positive_int(ncols, name="ncols")
    omega = frequencies(d_model, base=base)[k]
    nrows = -(-k.size // ncols)
    ncols = min(ncols, k.size)
    height = height if height is not None else 2.2 * nrows
    fig, axes = new_figure(nrows, ncols, width=width, height=height, squeeze=False)
    circle = np.linspace(0.0, 2 * np.pi, 121)
    for ax, kk, w in zip(axes.ravel(), k, omega, strict=False):
        ax.plot(np.sin(circle), np.cos(circle), color="0.75", lw=1)
        ax.plot([0, 0], [0.9, 1.1], color="0.4", lw=1)  # 12 o'clock: pos = 0
        tip, past = _hand(pos, w, trail)
        if trail:
            ax.scatter(past[:, 0], past[:, 1], s=10, c=np.linspace(0.85, 0.45, trail), cmap="Greys", vmin=0, vmax=1)
        ax.annotate("", xy=tip, xytext=(0, 0), arrowprops={"arrowstyle": "-|>", "color": "C3", "lw": 2})
        ax.set_title(f"k = {kk}: $\\omega$ = {w:.3g}\n$\\lambda$ = {2 * np.pi / w:.1f}", fontsize=8)
        ax.set_xlim(-1.2, 1.2)
        ax.set_ylim(-1.2, 1.2)
        ax.set_aspect("equal")
        ax.set_xticks([-1, 0, 1])
        ax.set_yticks([-1, 0, 1])
        ax.tick_params(labelsize=7)
    for ax in axes.ravel()[k.size :]:
        ax.set_visible(False)
    fig.suptitle(_clock_title(pos, d_model), fontsize=10)
    return fig


def _hand(pos: float, omega: float, trail: int) -> tuple[tuple[float, float], np.ndarray]:
    """The tip (sin pos w, cos pos w) of one hand and its ``trail`` previous tips, shape ``(trail, 2)``."""
    past = pos - np.arange(trail, 0, -1)  # pos - trail .. pos - 1
    return (np.sin(pos * omega), np.cos(pos * omega)), np.column_stack([np.sin(past * omega), np.cos(past * omega)])


def _clock_title(pos: float, d_model: int) -> str:
    return f"pos = {pos:g}, $d_{{model}}$ = {d_model}  (x = sin, y = cos)"


def _update_clock(fig: Figure, pos: float, d_model: int, pairs, base: float, trail: int) -> None:
    """Move the hands of a figure made by :func:`draw_clock` (same ``d_model``, ``pairs``, ``base``,
    ``trail``) to ``pos``: the same tips, trails and title as a new ``draw_clock(pos, ...)``."""
    omega = frequencies(d_model, base=base)[np.asarray(pairs)]
    for ax, w in zip(fig.axes, omega, strict=False):
        tip, past = _hand(pos, w, trail)
        ax.texts[0].xy = tip
        if trail:
            ax.collections[0].set_offsets(past)
    fig._suptitle.set_text(_clock_title(pos, d_model))


def draw_word_circles(words, positions, *, base: float = 10_000.0, width: float = 6.4, height: float = 4.2) -> Figure:
    r"""The first two coordinates of :math:`x + \mathrm{PE}(pos)` for each word, position by position.

    ``words`` maps a label to the word's embedding (shape ``(d,)``, ``d`` even). For each word the
    figure shows its own point :math:`(x_0, x_1)`, the unit circle around it on which every
    :math:`x + \mathrm{PE}(pos)` lands in this slice, and the points for ``positions`` numbered by
    position. Returns the figure.
    """
    items = list(dict(words).items())
    if not items:
        raise ValueError("words must map at least one label to an embedding, got none")
    pos = check_positions(positions)
    fig, ax = new_figure(width=width, height=height)
    circle = np.linspace(0.0, 2 * np.pi, 181)
    for colour, (label, x) in enumerate(items):
        points = embedded_positions(x, pos, base=base)[:, :2]  # (x0 + sin pos, x1 + cos pos)
        centre = np.asarray(x, dtype=np.float64)[:2]
        ax.plot(centre[0] + np.sin(circle), centre[1] + np.cos(circle), color=f"C{colour}", lw=0.8, alpha=0.5)
        ax.plot(*centre, "x", color=f"C{colour}", ms=8, mew=2, label=f"{label} (no position)")
        ax.plot(points[:, 0], points[:, 1], "o", color=f"C{colour}", ms=4)
        for p, (px, py) in zip(pos, points, strict=True):
            ax.annotate(f"{p:g}", (px, py), textcoords="offset points", xytext=(3, 3), fontsize=7,
                        color=f"C{colour}")
    ax.set_aspect("equal")
    ax.set_xlabel("dimension 0: $x_0 + \\sin(pos)$")
    ax.set_ylabel("dimension 1: $x_1 + \\cos(pos)$")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
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
    enough to follow the slider while it is dragged. Needs a running kernel (hidden on the website).
    """
    import ipywidgets as widgets

    from ._live import LiveFigure

    d_model = check_d_model(d_model)
    pairs = tuple(int(k) for k in _check_pairs(list(pairs), d_model))
    base = check_base(base)
    max_pos = check_positive_int(max_pos, name="max_pos")
    trail = 8  # draw_clock's default
    fig = draw_clock(0, d_model, pairs=pairs, base=base, trail=trail)
    moving = [artist for ax in fig.axes[: len(pairs)] for artist in (*ax.collections, *ax.texts)]
    live = LiveFigure(fig, animated=[*moving, fig._suptitle])

    def show(pos):
        _update_clock(fig, pos, d_model, pairs, base, trail)
        live.show()
        return fig

    slider = widgets.IntSlider(value=0, min=0, max=max_pos, step=1, description="pos")
    box = widgets.interactive(show, pos=slider)
    box.children = (slider, live.image, box.out)
    return box


# ---- the kernel-free stand-in: a JavaScript player over pre-rendered PNG frames --------------------
# matplotlib's Animation.to_jshtml names its elements with a random uuid4 (so re-running a notebook
# changes its output) and loads icon fonts from a CDN (so a page requests a file from outside the
# site, and the buttons are blank offline). This player has a fixed id and text buttons.
_HTML_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")

_PLAYER = """<div class="pe-player" id="{id}" style="display:inline-block;text-align:center">
<img id="{id}_img" alt="{alt}" src="{first}" style="background:white;max-width:100%">
<div><input id="{id}_slider" type="range" min="0" max="{last}" step="1" value="0" style="width:80%"
 aria-label="frame"></div>
<div>
<button type="button" id="{id}_prev" aria-label="previous frame">&#9664; prev</button>
<button type="button" id="{id}_play" aria-label="play or pause">play</button>
<button type="button" id="{id}_next" aria-label="next frame">next &#9654;</button>
<span id="{id}_label" style="margin-left:8px">{label0}</span>
</div>
</div>
<script>
(function() {{
  var frames = [{frames}];
  var labels = [{labels}];
  var img = document.getElementById("{id}_img"), slider = document.getElementById("{id}_slider");
  var label = document.getElementById("{id}_label"), play = document.getElementById("{id}_play");
  var current = 0, timer = null;
  function show(i) {{
    current = (i + frames.length) % frames.length;
    img.src = "data:image/png;base64," + frames[current];
    slider.value = current; label.textContent = labels[current];
  }}
  function stop() {{ if (timer) {{ clearInterval(timer); timer = null; play.textContent = "play"; }} }}
  slider.addEventListener("input", function() {{ stop(); show(parseInt(slider.value, 10)); }});
  document.getElementById("{id}_prev").addEventListener("click", function() {{ stop(); show(current - 1); }});
  document.getElementById("{id}_next").addEventListener("click", function() {{ stop(); show(current + 1); }});
  play.addEventListener("click", function() {{
    if (timer) {{ stop(); return; }}
    play.textContent = "pause";
    timer = setInterval(function() {{ show(current + 1); }}, {interval});
  }});
}})();
</script>
"""


def png_frames(draw, values, *, dpi: int = 72, colors: int = 32) -> list[str]:
    """Render ``draw(v)`` (a function returning a Figure) for each ``v`` as base64 PNG strings.

    Each frame is reduced to a palette of ``colors`` colours (2 .. 256), which makes line drawings
    three to four times smaller at no visible cost. Neither step embeds anything but pixels, so
    the strings depend only on the drawings. Returns one string per value.
    """
    from PIL import Image

    dpi = check_positive_int(dpi, name="dpi")
    colors = check_positive_int(colors, name="colors", minimum=2)
    if colors > 256:
        raise ValueError(f"colors must be at most 256 (a PNG palette), got {colors}")
    out = []
    for v in values:
        rgba = io.BytesIO()
        draw(v).savefig(rgba, format="png", dpi=dpi, facecolor="white")
        small = io.BytesIO()
        Image.open(rgba).convert("RGB").quantize(colors=colors).save(small, format="PNG", optimize=True)
        out.append(base64.b64encode(small.getvalue()).decode("ascii"))
    if not out:
        raise ValueError("values must hold at least one frame, got none")
    return out


def player_html(frames, labels, *, html_id: str, interval_ms: int = 250, alt: str = "animation") -> str:
    """A self-contained HTML player (slider, prev/play/next) over base64 PNG ``frames``.

    ``labels[i]`` is shown next to the buttons for frame ``i``. ``html_id`` names every element
    (must be unique on the page; letters, digits, underscore). No request leaves the page, and the
    output depends only on the arguments. Returns the HTML string.
    """
    frames, labels = list(frames), [str(s) for s in labels]
    if not frames or len(frames) != len(labels):
        raise ValueError(f"need one label per frame and at least one frame, got {len(frames)} frames "
                         f"and {len(labels)} labels")
    if not isinstance(html_id, str) or not _HTML_ID.match(html_id):
        raise ValueError(f"html_id must start with a letter and hold only letters, digits and _, got {html_id!r}")
    interval_ms = check_positive_int(interval_ms, name="interval_ms")
    return _PLAYER.format(
        id=html_id,
        alt=html.escape(alt, quote=True),
        first="data:image/png;base64," + frames[0],
        last=len(frames) - 1,
        label0=html.escape(labels[0], quote=False),
        frames=",".join(f'"{f}"' for f in frames),
        labels=_js_strings(labels),
        interval=interval_ms,
    )


def _js_strings(strings: list[str]) -> str:
    """Comma-separated JavaScript string literals, safe inside a <script> element."""
    return ",".join(json.dumps(s).replace("</", "<\\/") for s in strings)


def clock_animation_html(
    positions,
    d_model: int,
    *,
    pairs=(0, 1, 2, 3),
    base: float = 10_000.0,
    html_id: str = "pe_clock",
    dpi: int = 72,
    width: float = 6.4,
    height: float | None = None,
    interval_ms: int = 300,
) -> str:
    """The clock of :func:`draw_clock` at each position, as a scrubbable player (see :func:`player_html`).

    Deterministic: the same arguments give the same bytes. Returns the HTML string.
    """
    pos = check_positions(positions)
    d_model = check_d_model(d_model)
    _check_pairs(pairs, d_model)
    frames = png_frames(lambda p: draw_clock(p, d_model, pairs=pairs, base=base, width=width, height=height),
                        pos, dpi=dpi)
    labels = [f"pos = {p:g}" for p in pos]
    return player_html(frames, labels, html_id=html_id, interval_ms=interval_ms,
                       alt=f"clock hands of d_model = {d_model} for positions {pos[0]:g} to {pos[-1]:g}")
