"""A kernel-free player: a strip of PNG frames that a small script turns into a slider and a play button.

:func:`png_frames` renders a matplotlib figure once per value (redrawing only its moving artists) and
:func:`player_html` wraps the frames in HTML that also works without JavaScript (the frames side by
side). The HTML is byte-for-byte reproducible. Chapter 5's clock uses it (:func:`pe_lib.clock_animation_html`).
"""

from __future__ import annotations

import base64
import html
import io
import json
import re

import numpy as np
from matplotlib.figure import Figure

from .._validate import check_positive_int

_HTML_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")

_PLAYER = """<div class="pe-player" id="{id}"{text_px}>
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
                               "aria-label": "frame", style: "width: 100%"}});
  var prev = make("button", {{type: "button"}}, "\\u25c0 prev");
  var play = make("button", {{type: "button", "aria-label": "play or pause"}}, "play");
  var next = make("button", {{type: "button"}}, "next \\u25b6");
  var label = make("span", {{"aria-live": "polite", style: "margin-left: 8px"}});
  var bar = make("div"), buttons = make("div");
  bar.appendChild(slider);
  buttons.appendChild(prev); buttons.appendChild(play); buttons.appendChild(next); buttons.appendChild(label);
  root.insertBefore(bar, note); root.insertBefore(buttons, note); root.removeChild(note);
  strip.style.overflowX = "hidden";
  // one frame at a time: as wide as the column allows, never wider than drawn (no blurred labels)
  root.style.maxWidth = frames[0].getAttribute("width") + "px";
  for (var f = 0; f < frames.length; f++) {{
    frames[f].style.width = "100%"; frames[f].style.height = "auto"; frames[f].style.marginRight = "0";
  }}
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


def player_html(frames, labels, *, html_id: str, interval_ms: int = 250, alt: str = "animation",
                text_px: float | None = None) -> str:
    """A self-contained HTML player over base64 PNG ``frames``, that also works without JavaScript.

    The markup is a strip of all frames that scrolls sideways, and a note saying so: this is what
    JupyterLab shows for a notebook it does not trust (it runs no script there), and it needs nothing
    else. Where the script runs, it shows one frame at a time with a slider, prev/play/next buttons and
    ``labels[i]`` beside them, advancing every ``interval_ms`` when playing; the frame then takes the
    width of the column up to its own width (never enlarged). Frame ``i`` has the alt
    text ``"{alt}, {labels[i]}"``. ``html_id`` names every element (unique on the page; letters,
    digits, underscore). ``text_px``, if given, is the height of the frames' smallest text in frame
    pixels, stored as ``data-text-px`` so that a page can check what size its labels are shown at.
    No request leaves the page, and the output depends only on the arguments. Returns the HTML string.
    """
    frames, labels = list(frames), [str(s) for s in labels]
    if not frames or len(frames) != len(labels):
        raise ValueError(f"need one label per frame and at least one frame, got {len(frames)} frames "
                         f"and {len(labels)} labels")
    if not isinstance(html_id, str) or not _HTML_ID.match(html_id):
        raise ValueError(f"html_id must start with a letter and hold only letters, digits and _, got {html_id!r}")
    interval_ms = check_positive_int(interval_ms, name="interval_ms")
    if text_px is not None and not (isinstance(text_px, (int, float)) and 0 < text_px < float("inf")):
        raise ValueError(f"text_px must be a positive number of pixels or None, got {text_px!r}")
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
        text_px="" if text_px is None else f' data-text-px="{text_px:.2f}"',
        images=images,
        note=html.escape(note, quote=False),
        labels=_js_strings(labels),
        interval=interval_ms,
    )


def _js_strings(strings: list[str]) -> str:
    """Comma-separated JavaScript string literals, safe inside a <script> element."""
    return ",".join(json.dumps(s).replace("</", "<\\/") for s in strings)
