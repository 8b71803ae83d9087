"""Pictures of chapter 21: which layers of a model rotate, and which keys each kind of layer lets a query see.

Both take what :func:`pe_lib.layer_positions` returns and return a matplotlib ``Figure`` (not shown; pass it
to :func:`pe_lib.show`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch, Rectangle

from ..modern.layer_types import layer_attention_mask
from .plots import new_figure

# one colour per (attention kind, rotates): a NoPE layer is light, a RoPE layer saturated
COLOURS = {("full", True): "#1f4e79", ("full", False): "#d9d9d9", ("sliding", True): "#2e8b57",
           ("sliding", False): "#b7e1c8", ("chunked", True): "#c05a00", ("chunked", False): "#f5cba7"}
NAMES = {("full", True): "full, RoPE", ("full", False): "full, NoPE", ("sliding", True): "sliding window, RoPE",
         ("sliding", False): "sliding window, NoPE", ("chunked", True): "chunked, RoPE",
         ("chunked", False): "chunked, NoPE"}


def _check_models(models) -> dict:
    if not isinstance(models, Mapping) or not models:
        raise TypeError("models must be a non-empty dict: name -> pe_lib.layer_positions(config)")
    for name, layers in models.items():
        if not isinstance(layers, list) or not layers or not all(isinstance(la, Mapping) for la in layers):
            raise TypeError(f"models[{name!r}] must be the list pe_lib.layer_positions returns")
    return dict(models)


def draw_layer_strips(models, *, width: float = 7.4):
    """One row of cells per model, one cell per layer, coloured by attention kind and by RoPE or NoPE.

    ``models``: name -> the list :func:`pe_lib.layer_positions` returns. Returns the ``Figure``.
    """
    models = _check_models(models)
    longest = max(len(layers) for layers in models.values())
    fig, ax = new_figure(width=width, height=0.5 * len(models) + 1.3)
    used = []
    for row, layers in enumerate(models.values()):
        for i, layer in enumerate(layers):
            key = (layer["attention"], bool(layer["rope"]))
            if key not in used:
                used.append(key)
            ax.add_patch(Rectangle((i - 0.45, row - 0.35), 0.9, 0.7, color=COLOURS[key], lw=0))
    ax.set_xlim(-0.5, longest - 0.5)
    ax.set_ylim(len(models) - 0.5, -0.5)
    ax.set_yticks(range(len(models)), list(models))
    ax.set_xlabel("layer (from the input)")
    ax.tick_params(axis="y", length=0)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    order = [k for k in COLOURS if k in used]
    fig.legend(handles=[Patch(color=COLOURS[k], label=NAMES[k]) for k in order], loc="outside lower center",
               ncols=min(3, len(order)), frameon=False)
    return fig


def draw_layer_masks(layers, seq_len: int, *, width: float = 7.4):
    """Side by side, the ``(seq_len, seq_len)`` mask of each layer: a dark cell where the query (row) sees the key.

    ``layers``: title -> one entry of :func:`pe_lib.layer_positions` (or ``{"attention": ..., "window": ...}``).
    Returns the ``Figure``.
    """
    if not isinstance(layers, Mapping) or not layers:
        raise TypeError("layers must be a non-empty dict: title -> one layer of pe_lib.layer_positions(config)")
    masks = {title: layer_attention_mask(layer, seq_len) for title, layer in layers.items()}
    height = round(width / len(masks) + 0.6, 1)  # a whole number of pixels at 100 dpi
    fig, axes = new_figure(1, len(masks), width=width, height=height, squeeze=False)
    for ax, (title, mask) in zip(axes[0], masks.items(), strict=True):
        ax.imshow(mask, cmap=ListedColormap(["#f2f2f2", "#1f4e79"]), vmin=0, vmax=1, interpolation="nearest")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("key position")
        ticks = np.arange(0, seq_len, 8)
        ax.set_xticks(ticks)
        ax.set_yticks(ticks)
    axes[0][0].set_ylabel("query position")
    return fig
