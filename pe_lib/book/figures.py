"""Showing a figure in a chapter: a sharp PNG, a description for screen readers, and its data as text.

A chapter ends a figure cell with ``pe_lib.show(fig, alt="...")``. That displays one output with

* ``image/png`` rendered at twice the figure's resolution, with ``width``/``height`` metadata at
  1x so that browsers show it at its designed size and sharp on high-density screens. The PNG holds
  an adaptive palette of 256 colours when that reproduces the drawing almost exactly (line plots,
  heat maps of one colour map: their other colours are anti-aliasing blends), about a third of the
  bytes of full colour; otherwise full colour, losslessly (:func:`encode_png`);
* ``alt`` in the output metadata: ``tools/execute.py`` copies it into the cell's
  ``mystnb.image.alt``, which myst-nb writes into the page's ``<img alt=...>``;
* ``text/plain``: :func:`figure_digest`, a rounded summary of every number the figure draws.
  Browsers and JupyterLab show the image; nbval compares the text, so a changed plot fails
  ``make test`` even though nbval never compares pixels.
"""

from __future__ import annotations

import base64
import io

import numpy as np
from matplotlib.collections import Collection
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.patches import Rectangle

# The book's text column is about 760 CSS pixels wide; a wider figure would be shrunk, and its text
# with it. Figures are designed at 100 dpi, so this is 7.6 inches.
MAX_WIDTH_PX = 760
RESOLUTION = 2  # device pixels per CSS pixel in the stored PNG
DIGEST_PREFIX = "Figure data"
# A palette replaces the full-colour pixels only if no more than PALETTE_MAX_SHARE of the pixels move by
# more than PALETTE_TOLERANCE levels (of 255) in a channel (those are anti-aliased edge pixels) and the
# mean move is at most PALETTE_MAX_MEAN levels (a smooth gradient of many colours would show bands).
PALETTE_TOLERANCE = 16
PALETTE_MAX_SHARE = 0.005
PALETTE_MAX_MEAN = 1.0


def _rounded(x: float, quantum: float) -> str:
    v = round(float(x) / quantum) * quantum
    return "0" if v == 0 else f"{v:.4g}"  # "0" also for -0.0


def _stats(values) -> str:
    """Count, min, max, mean and mean |value|, each to 4 significant digits of the largest |value|.

    Rounding on the scale of the data (not of each number) keeps a mean that is 0 up to rounding
    error at "0" on every CPU, while any change larger than 1e-4 of the scale shows.
    """
    a = np.asarray(values, dtype=float).ravel()
    a = a[np.isfinite(a)]
    if a.size == 0:
        return "no finite values"
    scale = np.abs(a).max()
    quantum = 10.0 ** (np.floor(np.log10(scale)) - 3) if scale > 0 else 1.0
    numbers = (a.min(), a.max(), a.mean(), np.abs(a).mean())
    mn, mx, mean, mean_abs = (_rounded(v, quantum) for v in numbers)
    return f"n={a.size} min={mn} max={mx} mean={mean} mean|.|={mean_abs}"


def figure_digest(fig: Figure) -> str:
    """Every number a figure draws, summarised: one line per drawn object, 4 significant digits.

    For each axes (in order): its title, then each line (``x`` and ``y``), image (the array), patch
    collection or scatter (offsets and colour values; a quiver's arrows ``U``, ``V`` too) and bar
    (heights), each as count, min, max,
    mean and mean absolute value. Returns the lines joined by newlines; the first line starts with
    ``"Figure data"`` and gives the size in CSS pixels.
    """
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    w, h = (fig.get_size_inches() * fig.dpi).round().astype(int)
    out = [f"{DIGEST_PREFIX}: {w}x{h} px, {len(fig.axes)} axes"]
    for i, ax in enumerate(fig.axes):
        title = ax.get_title() or ax.get_ylabel() or ""
        out.append(f"axes {i} {title!r}")
        for line in ax.get_lines():
            x, y = line.get_data()
            out.append(f"  line x: {_stats(x)}; y: {_stats(y)}")
        for image in ax.get_images():
            assert isinstance(image, AxesImage)
            arr = np.asarray(image.get_array())
            out.append(f"  image {'x'.join(map(str, arr.shape))}: {_stats(arr)}")
        for coll in ax.collections:
            assert isinstance(coll, Collection)
            parts = [f"  {type(coll).__name__}"]
            offsets = coll.get_offsets()
            if len(offsets):
                parts.append(f"offsets {_stats(offsets)}")
            arr = coll.get_array()
            if arr is not None:
                parts.append(f"values {_stats(arr)}")
            if hasattr(coll, "U") and hasattr(coll, "V"):  # a Quiver: its arrows, not only where they start
                parts.append(f"arrows u {_stats(coll.U)}; v {_stats(coll.V)}")
            out.append(" ".join(parts))
        bars = [p for p in ax.patches if isinstance(p, Rectangle)]
        if bars:
            out.append(f"  {len(bars)} bars: heights {_stats([b.get_height() for b in bars])}")
    return "\n".join(out)


def encode_png(rgba) -> bytes:
    """A small PNG of an ``(height, width, 4)`` uint8 RGBA image that looks the same as the image.

    An opaque image is quantized to an adaptive palette of 256 colours (Pillow's median cut, no
    dithering) and the palette is kept if at most ``PALETTE_MAX_SHARE`` of the pixels differ from
    the image by more than ``PALETTE_TOLERANCE`` levels in any channel and the mean difference (the
    largest channel's, over all pixels) is at most ``PALETTE_MAX_MEAN``; otherwise, and for an image
    with transparency, the PNG is lossless (RGB, or RGBA when any pixel is transparent). Nothing but
    the pixels is stored (no "Software" stamp), so the bytes depend on the image only.
    Returns the PNG file's bytes.
    """
    from PIL import Image

    rgba = np.asarray(rgba)
    if rgba.dtype != np.uint8 or rgba.ndim != 3 or rgba.shape[2] != 4 or 0 in rgba.shape:
        raise ValueError(f"rgba must be a (height, width, 4) uint8 array, got {rgba.dtype} of shape {rgba.shape}")
    buf = io.BytesIO()
    if not (rgba[..., 3] == 255).all():
        Image.fromarray(rgba, mode="RGBA").save(buf, format="PNG")
        return buf.getvalue()
    rgb = Image.fromarray(np.ascontiguousarray(rgba[..., :3]), mode="RGB")  # (height, width, 3)
    palette = rgb.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    moved = np.abs(np.asarray(palette.convert("RGB"), dtype=np.int16) - rgba[..., :3]).max(axis=2)
    faithful = np.mean(moved > PALETTE_TOLERANCE) <= PALETTE_MAX_SHARE and moved.mean() <= PALETTE_MAX_MEAN
    (palette if faithful else rgb).save(buf, format="PNG")  # zlib level 6: level 9 saves 5% in 7x the time
    return buf.getvalue()


def _png(fig: Figure, dpi: float) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, facecolor=fig.get_facecolor())
    buf.seek(0)
    with Image.open(buf) as drawn:
        rgba = np.asarray(drawn.convert("RGBA"))  # (height, width, 4)
    return encode_png(rgba)


class ShownFigure:
    """A figure as :func:`show` displays it: ``bundle`` (2x PNG, digest) and ``metadata`` (size, alt).

    IPython displays it through ``_repr_mimebundle_``, so myst-nb's ``glue`` stores exactly this image,
    sized and described as in the chapter, for another page to paste with ``{glue:figure}``.
    """

    def __init__(self, bundle: dict, metadata: dict):
        self.bundle, self.metadata = bundle, metadata

    def _repr_mimebundle_(self, include=None, exclude=None):
        return dict(self.bundle), {k: dict(v) for k, v in self.metadata.items()}


def shown(fig: Figure, *, alt: str) -> ShownFigure:
    """What :func:`show` displays, as an object: pass it to ``myst_nb.glue`` to reuse a figure on a page.

    Checks ``fig`` and ``alt`` as :func:`show` does. Returns a :class:`ShownFigure`.
    """
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    if not isinstance(alt, str) or len(alt.split()) < 4 or alt.strip().lower().endswith((".png", ".svg", ".jpg")):
        raise ValueError(f"alt must describe the figure in words (at least 4 words, not a file name), got {alt!r}")
    w, h = (fig.get_size_inches() * fig.dpi).round().astype(int)
    if w > MAX_WIDTH_PX:
        raise ValueError(
            f"the figure is {w} px wide; the text column holds {MAX_WIDTH_PX} px: "
            f"make it at most {MAX_WIDTH_PX / fig.dpi:.2f} inches wide at dpi {fig.dpi:g}"
        )
    png = base64.b64encode(_png(fig, RESOLUTION * fig.dpi)).decode("ascii")
    bundle = {"image/png": png, "text/plain": figure_digest(fig)}
    metadata = {"image/png": {"width": int(w), "height": int(h), "alt": " ".join(alt.split())}}
    return ShownFigure(bundle, metadata)


def show(fig: Figure, *, alt: str) -> None:
    """Display ``fig`` in a notebook as a 2x PNG with ``alt`` text and its :func:`figure_digest`.

    ``alt``: what the figure shows, in a sentence or two, for readers who cannot see it (not a
    file name). The figure must fit the text column: at most ``MAX_WIDTH_PX`` (760) pixels wide at
    its dpi. A figure made with ``pyplot`` is closed afterwards so that it is not shown twice.
    """
    from IPython.display import display  # only notebooks call this

    figure = shown(fig, alt=alt)
    display(figure.bundle, raw=True, metadata=figure.metadata)
    if fig.canvas.manager is not None:  # made by pyplot: close it, or the inline backend shows it again
        import matplotlib.pyplot as plt

        plt.close(fig)
