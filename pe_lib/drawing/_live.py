"""A figure that a widget redraws in place: the redraw machinery shared by the slider widgets.

Making a new figure and rendering it from scratch on every slider move costs a few hundred
milliseconds (most of it laying out and drawing text: tick labels, titles, colorbars). A
:class:`LiveFigure` instead keeps one figure and an Agg canvas for it:

* the layout is computed once, by a full draw, and then frozen;
* the artists that change (``animated``) are drawn on top of a stored picture of everything else
  (blitting), so unchanged parts such as a colorbar are never drawn again;
* texts (tick labels, titles, legends) are rasterised once and their pixels replayed when the same
  text is drawn again (:class:`_TextCache`);
* the picture goes to the browser as a PNG in an ``ipywidgets.Image``, which works in any Jupyter
  front end without an interactive matplotlib backend.

A redraw (:meth:`LiveFigure.show`) is therefore the whole wait of a learner: drawing the changed
artists and encoding the PNG. Only the widget builders import this module (and ipywidgets), so that
``import pe_lib`` stays light.
"""

from __future__ import annotations

import io

import numpy as np
from matplotlib.axes import Axes
from PIL import Image


class LiveFigure:
    """Keep ``figure`` on screen in ``self.image`` (an ``ipywidgets.Image``); redraw with :meth:`show`.

    ``animated`` lists the artists (axes, texts, lines, ...) that updates change; everything else is
    drawn once. The layout the figure has when the LiveFigure is made is kept for good, so build the
    figure in the state that needs the most room (longest tick labels) and update it afterwards.
    """

    def __init__(self, figure, animated) -> None:
        import ipywidgets as widgets
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        self.figure = figure
        self.canvas = FigureCanvasAgg(figure)
        self.animated = list(animated)
        if not self.animated:
            raise ValueError("animated must list at least one artist that updates change, got none")
        self.canvas.draw()  # runs the layout engine, if the figure has one
        figure.set_layout_engine("none")  # ... and keeps its result
        for artist in self.animated:
            artist.set_animated(True)
            if isinstance(artist, Axes):
                _pin_decorations(artist)
        self.canvas.draw()  # everything that never changes
        self._background = self.canvas.copy_from_bbox(figure.bbox)
        self.text_cache = _TextCache(self.canvas.get_renderer())
        self.image = widgets.Image(format="png")

    def show(self) -> bytes:
        """Draw the animated artists over the stored background and publish the picture as a PNG.

        Returns the PNG bytes (also in ``self.image.value``).
        """
        self.canvas.restore_region(self._background)
        for artist in self.animated:
            self.figure.draw_artist(artist)
        picture = self.png()
        self.image.value = picture
        return picture

    def png(self) -> bytes:
        """The canvas as it is now, as PNG bytes (8-bit RGB, zlib level 1: the picture is redrawn at
        every slider move, so speed matters more than the last few percent of size)."""
        rgb = np.asarray(self.canvas.buffer_rgba())[..., :3]
        out = io.BytesIO()
        Image.fromarray(rgb).save(out, format="png", compress_level=1)
        return out.getvalue()


class _TextCache:
    """Draw each distinct text once; afterwards replay its glyph bitmaps at the new position.

    Laying out a string and rasterising its glyphs is most of the cost of drawing an axes in
    matplotlib (tick labels, titles, legends). A text is identified by its string, font, angle and
    antialiasing; it is drawn at whole pixels, so a replay shifted by whole pixels gives the same
    pixels (the text may sit up to half a pixel from where an unrounded draw would put it). The
    colour and clipping come from each call. Texts with rules (mathtext fraction bars) are not cached.
    """

    def __init__(self, renderer) -> None:
        self.renderer = renderer
        self._draw_text = renderer.draw_text
        self.store: dict = {}
        renderer.draw_text = self.draw_text  # this renderer only

    def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None) -> None:
        key = (s, prop.copy(), angle, ismath, gc.get_antialiased())
        x, y = round(x), round(y)
        entry = self.store.get(key)
        target = self.renderer._renderer
        if entry is None:
            recorder = _Recorder(target)
            self.renderer._renderer = recorder
            try:
                self._draw_text(gc, x, y, s, prop, angle, ismath, mtext)
            finally:
                self.renderer._renderer = target
            if recorder.cacheable:
                self.store[key] = (x, y, recorder.glyphs)
            return
        x0, y0, glyphs = entry
        for bitmap, left, bottom in glyphs:
            target.draw_text_image(bitmap, left + x - x0, bottom + y - y0, 0, gc)


class _Recorder:
    """Stands in for the Agg renderer's C object while a text is drawn: keeps the glyph bitmaps."""

    def __init__(self, target) -> None:
        self.target, self.glyphs, self.cacheable = target, [], True

    def draw_text_image(self, bitmap, left, bottom, angle, gc) -> None:
        self.glyphs.append((np.array(bitmap), left, bottom))
        self.target.draw_text_image(bitmap, left, bottom, angle, gc)

    def draw_path(self, *args) -> None:
        self.cacheable = False  # a rule drawn as a path: replaying glyphs alone would lose it
        self.target.draw_path(*args)


def _pin_decorations(ax: Axes) -> None:
    """Keep the axis labels and the title where the last draw put them.

    Otherwise every draw measures all tick labels again to place them (about a third of the cost of
    drawing an axes). Part of the frozen layout: labels are where the widest tick labels put them.
    """
    to_axes = ax.transAxes.inverted()
    x_label, y_label = ax.xaxis.label, ax.yaxis.label
    # x label: x in axes coordinates, y in pixels; y label: x in pixels, y in axes coordinates
    x_at = to_axes.transform(x_label.get_transform().transform(x_label.get_position()))
    y_at = to_axes.transform(y_label.get_transform().transform(y_label.get_position()))
    ax.xaxis.set_label_coords(*x_at)
    ax.yaxis.set_label_coords(*y_at)
    ax._autotitlepos = False  # matplotlib's switch for "title placed by hand": keep the drawn position
