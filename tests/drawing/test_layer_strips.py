"""The layer strips and masks of chapter 21 (pe_lib.drawing.layers): what is drawn, and bad input."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.figure import Figure

import pe_lib

COHERE = pe_lib.layer_positions({"model_type": "cohere2", "num_hidden_layers": 8})
LLAMA4 = pe_lib.layer_positions({"model_type": "llama4_text", "num_hidden_layers": 4})


def test_strips_draw_one_cell_per_layer_in_its_colour():
    fig = pe_lib.draw_layer_strips({"Command R7B-like": COHERE, "Llama 4-like": LLAMA4})
    assert isinstance(fig, Figure)
    (ax,) = fig.axes
    assert len(ax.patches) == 8 + 4
    colours = [matplotlib.colors.to_hex(p.get_facecolor()) for p in ax.patches]
    # Cohere 2: three sliding RoPE layers, then a full NoPE one; Llama 4: three chunked RoPE, then full NoPE
    assert colours[:4] == ["#2e8b57", "#2e8b57", "#2e8b57", "#d9d9d9"]
    assert colours[8:] == ["#c05a00", "#c05a00", "#c05a00", "#d9d9d9"]
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["full, NoPE", "sliding window, RoPE", "chunked, RoPE"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["Command R7B-like", "Llama 4-like"]


def test_masks_show_what_layer_attention_mask_says():
    fig = pe_lib.draw_layer_masks({"sliding": {"attention": "sliding", "window": 3},
                                   "chunked": {"attention": "chunked", "window": 4}}, 9)
    assert len(fig.axes) == 2
    shown = fig.axes[1].images[0].get_array()
    np.testing.assert_array_equal(np.asarray(shown), pe_lib.layer_attention_mask({"attention": "chunked",
                                                                                  "window": 4}, 9))


@pytest.mark.parametrize("models", [{}, [COHERE], {"a": []}, {"a": [1, 2]}])
def test_strips_refuse_what_is_not_layer_positions(models):
    with pytest.raises(TypeError):
        pe_lib.draw_layer_strips(models)


def test_masks_refuse_bad_input():
    with pytest.raises(TypeError):
        pe_lib.draw_layer_masks([{"attention": "full"}], 4)
    with pytest.raises(ValueError):
        pe_lib.draw_layer_masks({"x": {"attention": "sliding", "window": 0}}, 4)
