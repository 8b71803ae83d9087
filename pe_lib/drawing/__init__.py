"""Drawing and widgets: heatmaps, plots, encodings as bars and dials (ch. 3 and the home page), the
clock and its HTML player, the explorers of ch. 4 and 9, the live-figure cache of the widgets.
matplotlib and ipywidgets live here only. Used by chapters 1-7, 9 and 16.
"""

from .bars import encoding_bars
from .base_explorer import base_explorer, draw_base_overview
from .clock import clock_animation_html, clock_widget, draw_clock, draw_word_circles
from .explorer import explorer_figure, explorer_summary, explorer_widget
from .layers import draw_layer_masks, draw_layer_strips
from .player import player_html, png_frames
from .plots import binary_digits, bit_wave, heatmap, heatmap_grid, new_figure, zero_crossings

__all__ = [
    "base_explorer",
    "binary_digits",
    "bit_wave",
    "clock_animation_html",
    "clock_widget",
    "draw_base_overview",
    "draw_clock",
    "draw_layer_masks",
    "draw_layer_strips",
    "draw_word_circles",
    "encoding_bars",
    "explorer_figure",
    "explorer_summary",
    "explorer_widget",
    "heatmap",
    "heatmap_grid",
    "new_figure",
    "player_html",
    "png_frames",
    "zero_crossings",
]
