"""The kernel-free player (pe_lib.drawing.player): PNG frames redrawn in place, and their HTML."""

import matplotlib

matplotlib.use("Agg")

import base64
import importlib
import io

import numpy as np
import pytest
from PIL import Image

import pe_lib


def _full_drawing(fig, colors=32):
    """The reference frame: ``fig`` drawn from scratch, reduced to the same palette as png_frames."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    out = io.BytesIO()
    rgb = Image.fromarray(np.asarray(canvas.buffer_rgba())[..., :3])
    rgb.quantize(colors=colors, method=Image.Quantize.FASTOCTREE).save(out, format="PNG")
    return base64.b64encode(out.getvalue()).decode("ascii")


def _clock_frames(positions, pairs=(0, 1, 5), dpi=40, **kwargs):
    clock = importlib.import_module("pe_lib.drawing.clock")
    fig = pe_lib.draw_clock(positions[0], 12, pairs=pairs, dpi=dpi, width=4.0)
    update = lambda p: clock._update_clock(fig, p, 12, pairs, 10_000.0, 8)  # noqa: E731
    return pe_lib.png_frames(fig, update, positions, animated=clock._moving_artists(fig), **kwargs)


def test_redrawing_only_the_moving_parts_gives_the_pixels_of_a_full_drawing():
    positions = [0, 1, 6, 13.5]
    frames = _clock_frames(positions)
    for p, frame in zip(positions, frames, strict=True):
        assert frame == _full_drawing(pe_lib.draw_clock(p, 12, pairs=(0, 1, 5), dpi=40, width=4.0))


def test_png_frames_are_small_valid_pngs_that_depend_only_on_the_drawing():
    frames = _clock_frames([0, 1, 2], colors=8)
    assert len(frames) == 3
    raw = [base64.b64decode(f) for f in frames]
    assert all(r.startswith(b"\x89PNG\r\n\x1a\n") for r in raw)
    assert len(set(frames)) == 3
    assert frames == _clock_frames([0, 1, 2], colors=8)
    assert b"tEXt" not in raw[0]  # no metadata (software, dates)
    image = Image.open(io.BytesIO(raw[0]))
    assert image.mode == "P" and len(image.getcolors()) <= 8 and image.size == (160, 116)  # 4.0 x 2.9 in at dpi 40


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"colors": 1}, "colors must be an integer >= 2"),
    ({"colors": 257}, "at most 256"),
    ({"animated": []}, "animated must list the artists"),
])
def test_png_frames_rejects_bad_settings(kwargs, match):
    fig, ax = pe_lib.new_figure(width=1, height=1)
    (dot,) = ax.plot([0], [0], "o")
    with pytest.raises(ValueError, match=match):
        pe_lib.png_frames(fig, lambda v: dot.set_data([v], [v]), [0], **({"animated": [dot]} | kwargs))


def test_png_frames_needs_values():
    fig, ax = pe_lib.new_figure(width=1, height=1)
    (dot,) = ax.plot([0], [0], "o")
    with pytest.raises(ValueError, match="at least one frame"):
        pe_lib.png_frames(fig, lambda v: None, [], animated=[dot])


def _png(width, height):
    out = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(out, format="PNG")
    return base64.b64encode(out.getvalue()).decode("ascii")


def test_player_html_is_a_strip_of_frames_that_a_script_turns_into_a_player():
    a, b = _png(30, 20), _png(30, 20)
    html = pe_lib.player_html([a, b], ["a<b & c", 'say "</script>"'], html_id="demo_1", alt='"x"')
    markup, script = html.split("<script>")
    # without JavaScript (an untrusted notebook in JupyterLab): every frame, no control that needs a script
    assert markup.count("<img ") == 2 and f'src="data:image/png;base64,{a}"' in markup
    assert 'width="30" height="20"' in markup
    assert 'alt="&quot;x&quot;, a&lt;b &amp; c"' in markup  # alt text and label, escaped for an attribute
    assert 'id="demo_1_frames"' in markup and "overflow-x: auto" in markup  # a strip that scrolls sideways
    assert "scroll sideways" in markup
    assert "<button" not in markup and "<input" not in markup
    # with JavaScript: the controls, and the labels as string literals that cannot close the script
    assert 'make("input", {type: "range"' in script and '"play"' in script
    assert '"a<b & c","say \\"<\\/script>\\""' in script
    assert html.count("</script>") == 1
    assert "http" not in html and "uuid" not in html
    assert "data-text-px" not in html
    # one frame at a time, as wide as the column allows but never wider than drawn; the slider spans it
    assert 'root.style.maxWidth = frames[0].getAttribute("width") + "px"' in script
    assert 'style: "width: 100%"' in script
    sized = pe_lib.player_html([a], ["x"], html_id="demo_2", text_px=12.5)
    assert '<div class="pe-player" id="demo_2" data-text-px="12.50">' in sized
    for bad in (0, -1.0, float("nan"), "12"):
        with pytest.raises(ValueError, match="text_px"):
            pe_lib.player_html([a], ["x"], html_id="demo_3", text_px=bad)


@pytest.mark.parametrize(("frames", "labels", "html_id", "match"), [
    ([], [], "x", "at least one frame"),
    (["A"], ["a", "b"], "x", "one label per frame"),
    (["A"], ["a"], "1x", "html_id must start with a letter"),
    (["A"], ["a"], "x-y", "html_id must start with a letter"),
    (["A"], ["a"], None, "html_id must start with a letter"),
    ([base64.b64encode(b"GIF89a" + bytes(40)).decode()], ["a"], "x", "base64-encoded PNG"),
])
def test_player_html_rejects_bad_arguments(frames, labels, html_id, match):
    with pytest.raises(ValueError, match=match):
        pe_lib.player_html(frames, labels, html_id=html_id)
