r"""The encoding as a clock with ``d_model / 2`` hands.

Pair ``k`` of PE(pos) is the point :math:`h_k(pos) = (\sin pos\,\omega_k,\ \cos pos\,\omega_k)` on the
unit circle. Drawn with the sine as the horizontal coordinate :math:`u` and the cosine as the
vertical one :math:`v`, the hand starts at 12 o'clock and, since the cross product of the points at
positions :math:`p` and :math:`p + s` is

.. math::

    u_p\,v_{p+s} - v_p\,u_{p+s} = \sin(p\,\omega_k)\cos((p+s)\omega_k) - \cos(p\,\omega_k)\sin((p+s)\omega_k)
                                = -\sin(s\,\omega_k),

it turns clockwise at :math:`\omega_k` radians per token whenever :math:`0 < s\,\omega_k \bmod 2\pi < \pi`.

This module computes the hands and draws them: a static figure, an ipywidgets slider, and a
kernel-free player (a strip of frames that a script turns into a slider and a play button) whose
HTML is byte-for-byte reproducible.
"""

from __future__ import annotations

import base64
import html
import io
import json
import re

import numpy as np
from matplotlib.figure import Figure

from .._validate import check_base, check_d_model, check_finite_real, check_positions, check_positive_int
from ..encodings.frequencies import frequencies
from .plots import new_figure
from ..encodings.sinusoidal import sinusoidal

CLOCKWISE, COUNTERCLOCKWISE, STILL = "clockwise", "counterclockwise", "still"


def hand_positions(positions, d_model: int, *, base: float = 10_000.0) -> np.ndarray:
    r"""The clock hands of each position: shape ``(n, d_model // 2, 2)``.

    ``[p, k]`` is the point :math:`(\sin pos_p\,\omega_k,\ \cos pos_p\,\omega_k)` (horizontal: sin, vertical: cos),
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
    r"""The inputs of the first layer for one word: :math:`e + \mathrm{PE}(pos)` for each position.

    ``embedding``: the word's vector, shape ``(d,)`` with ``d`` even. Returns shape ``(n, d)``.
    Every pair ``(2k, 2k+1)`` of the result lies on the unit circle around the same pair of ``e``.
    """
    x = np.asarray(embedding, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"embedding must be one vector of shape (d,), got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("embedding must be finite, got NaN or infinity among its values")
    d = check_d_model(x.size, name="the length of embedding")
    return x + sinusoidal(positions, d, base=base)  # e + PE(pos)


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
    height = height if height is not None else 2.4 * nrows
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
        ax.set_title(f"k = {kk}: $\\omega$ = {w:.3g}\n$\\lambda$ = {2 * np.pi / w:.1f}")
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
_HTML_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")

_PLAYER = """<div class="pe-player" id="{id}">
<div id="{id}_frames" style="overflow-x: auto; white-space: nowrap; max-width: 100%">
{images}
</div>
<div id="{id}_note" style="font-size: smaller">{note}</div>
</div>
<script>
(function () {{
  var root = document.getElementById("{id}");
  var strip = document.getElementById("{id}_frames"), note = document.getElementById("{id}_note");
  var frames = strip.getElementsByTagName("img"), labels = [{labels}];
  var current = 0, timer = null;
  function make(tag, attributes, text) {{
    var node = document.createElement(tag);
    for (var name in attributes) node.setAttribute(name, attributes[name]);
    if (text) node.textContent = text;
    return node;
  }}
  var slider = make("input", {{type: "range", min: 0, max: frames.length - 1, step: 1, value: 0,
                               "aria-label": "frame", style: "width: 80%"}});
  var prev = make("button", {{type: "button"}}, "\\u25c0 prev");
  var play = make("button", {{type: "button", "aria-label": "play or pause"}}, "play");
  var next = make("button", {{type: "button"}}, "next \\u25b6");
  var label = make("span", {{"aria-live": "polite", style: "margin-left: 8px"}});
  var bar = make("div"), buttons = make("div");
  bar.appendChild(slider);
  buttons.appendChild(prev); buttons.appendChild(play); buttons.appendChild(next); buttons.appendChild(label);
  root.insertBefore(bar, note); root.insertBefore(buttons, note); root.removeChild(note);
  strip.style.overflowX = "hidden";
  function show(i) {{
    current = (i + frames.length) % frames.length;
    for (var j = 0; j < frames.length; j++) frames[j].style.display = j === current ? "inline-block" : "none";
    slider.value = current; label.textContent = labels[current];
  }}
  function stop() {{ if (timer) {{ clearInterval(timer); timer = null; play.textContent = "play"; }} }}
  slider.addEventListener("input", function () {{ stop(); show(parseInt(slider.value, 10)); }});
  prev.addEventListener("click", function () {{ stop(); show(current - 1); }});
  next.addEventListener("click", function () {{ stop(); show(current + 1); }});
  play.addEventListener("click", function () {{
    if (timer) {{ stop(); return; }}
    play.textContent = "pause";
    timer = setInterval(function () {{ show(current + 1); }}, {interval});
  }});
  show(0);
}})();
</script>
"""


def png_frames(fig: Figure, update, values, *, animated, colors: int = 32) -> list[str]:
    """Render ``fig`` at each of ``values`` as base64 PNG strings, redrawing only what changes.

    ``update(v)`` must change only the artists listed in ``animated`` (lines, collections, texts).
    The figure is laid out and drawn once; for each value only the animated artists are drawn over a
    stored picture of everything else (blitting), which costs a few milliseconds instead of a full
    redraw. Each frame is then reduced to a palette of ``colors`` colours (2 .. 256, Pillow's fast
    octree method), which makes line drawings three to four times smaller at no visible cost, and
    saved at zlib's default level (the slowest levels save a few percent for several times the time).
    Nothing but pixels is stored, so the strings depend only on the drawing. Returns one string per value.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    colors = check_positive_int(colors, name="colors", minimum=2)
    if colors > 256:
        raise ValueError(f"colors must be at most 256 (a PNG palette), got {colors}")
    animated = list(animated)
    if not animated:
        raise ValueError("animated must list the artists that update(v) changes, got none")
    canvas = FigureCanvasAgg(fig)
    canvas.draw()  # runs the layout engine, if any ...
    fig.set_layout_engine("none")  # ... and keeps its result for every frame
    for artist in animated:
        artist.set_animated(True)  # left out of the background
    canvas.draw()
    background = canvas.copy_from_bbox(fig.bbox)
    out = []
    for v in values:
        update(v)
        canvas.restore_region(background)
        for artist in animated:
            fig.draw_artist(artist)
        rgb = Image.fromarray(np.asarray(canvas.buffer_rgba())[..., :3])
        small = io.BytesIO()
        rgb.quantize(colors=colors, method=Image.Quantize.FASTOCTREE).save(small, format="PNG")
        out.append(base64.b64encode(small.getvalue()).decode("ascii"))
    if not out:
        raise ValueError("values must hold at least one frame, got none")
    return out


def _png_size(frame: str) -> tuple[int, int]:
    """Width and height in pixels of a base64 PNG, from its header."""
    head = base64.b64decode(frame[:44])  # the 8-byte signature and the IHDR chunk: 33 bytes
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("frames must be base64-encoded PNG images (as png_frames returns)")
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def player_html(frames, labels, *, html_id: str, interval_ms: int = 250, alt: str = "animation") -> str:
    """A self-contained HTML player over base64 PNG ``frames``, that also works without JavaScript.

    The markup is a strip of all frames that scrolls sideways, and a note saying so: this is what
    JupyterLab shows for a notebook it does not trust (it runs no script there), and it needs nothing
    else. Where the script runs, it shows one frame at a time with a slider, prev/play/next buttons and
    ``labels[i]`` beside them, advancing every ``interval_ms`` when playing. Frame ``i`` has the alt
    text ``"{alt}, {labels[i]}"``. ``html_id`` names every element (unique on the page; letters,
    digits, underscore). No request leaves the page, and the output depends only on the arguments.
    Returns the HTML string.
    """
    frames, labels = list(frames), [str(s) for s in labels]
    if not frames or len(frames) != len(labels):
        raise ValueError(f"need one label per frame and at least one frame, got {len(frames)} frames "
                         f"and {len(labels)} labels")
    if not isinstance(html_id, str) or not _HTML_ID.match(html_id):
        raise ValueError(f"html_id must start with a letter and hold only letters, digits and _, got {html_id!r}")
    interval_ms = check_positive_int(interval_ms, name="interval_ms")
    width, height = _png_size(frames[0])
    images = "\n".join(
        f'<img alt="{html.escape(f"{alt}, {label}", quote=True)}" width="{width}" height="{height}" '
        f'style="display: inline-block; max-width: none; margin-right: 8px; border: 1px solid lightgray; '
        f'background-color: white" '
        f'src="data:image/png;base64,{frame}">'
        for frame, label in zip(frames, labels, strict=True)
    )
    note = (f"{len(frames)} frames, {labels[0]} to {labels[-1]}: scroll sideways to step through them. "
            "Where JavaScript runs (on the website, or in Jupyter once this cell has run) this is a player "
            "with a slider and a play button.")
    return _PLAYER.format(
        id=html_id,
        images=images,
        note=html.escape(note, quote=False),
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
    return player_html(frames, labels, html_id=html_id, interval_ms=interval_ms,
                       alt=f"clock hands of d_model = {d_model}")
