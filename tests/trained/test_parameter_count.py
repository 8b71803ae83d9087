"""pe_lib.parameter_count (pe_lib/trained/model_analysis.py) against counts done by hand: a small tree of every
kind of node, and the Transformer's own layout (pe_lib/trained/transformer.py's docstring) for two sizes."""

import numpy as np
import pytest

import pe_lib
from pe_lib.trained import transformer


def test_a_small_tree_counted_by_hand():
    tree = {
        "embed": np.zeros((5, 3)),  # 15
        "blocks": [{"w": np.ones((3, 3)), "b": np.zeros(3)}, {"w": np.ones((3, 3)), "b": np.zeros(3)}],  # 2 * 12
        "scale": np.array(2.0),  # a 0-d array: 1
        "pair": (np.zeros((2, 2), np.float32), np.zeros(1, np.int32)),  # 4 + 1
        "empty": [],
    }
    assert pe_lib.parameter_count(tree) == 45
    assert type(pe_lib.parameter_count(tree)) is int
    assert pe_lib.parameter_count([np.zeros((0, 4))]) == 0  # an array with no entries is still an array


@pytest.mark.parametrize(
    ("sizes", "expected"),
    [
        # V=5, d=8, N=1 block, 2 heads, L=6: embed 40 + block 840 + final norm 16 + unembed 40 + pos 48 + rel_bias 64;
        # a block: norms 4*8, W_Q W_K W_V 3*2*8*4, W_O 8*8, W_1 8*32 and b_1 32, W_2 32*8 and b_2 8
        ({"vocab_size": 5, "d_model": 8, "n_layers": 1, "n_heads": 2, "max_len": 6}, 1048),
        # chapter 20's models (V=128 byte values, d=32, 2 blocks of 4 heads, L=64): 64*128 + 2*12576 + 64 + 2048 + 128
        ({"vocab_size": 128, "d_model": 32, "n_layers": 2, "n_heads": 4, "max_len": 64}, 35_584),
    ],
)
def test_the_transformer_layout_counted_by_hand(sizes, expected):
    assert pe_lib.parameter_count(transformer.init_params(0, **sizes)) == expected


@pytest.mark.parametrize(
    ("params", "error", "message"),
    [
        ({"w": np.zeros(3), "lr": 0.01}, TypeError, "leaf of type float"),
        ([np.zeros(2), None], TypeError, "leaf of type NoneType"),
        ({"name": np.array(["a", "b"])}, TypeError, "leaf of type ndarray"),
        ("weights", TypeError, "leaf of type str"),
        ({"blocks": [{}, []]}, ValueError, "holds no array"),
        ({}, ValueError, "holds no array"),
    ],
)
def test_bad_trees_are_refused_with_what_was_found(params, error, message):
    with pytest.raises(error, match=message):
        pe_lib.parameter_count(params)


def test_a_model_instead_of_its_parameters_is_refused():
    model = pe_lib.TrainedTransformer.__new__(pe_lib.TrainedTransformer)  # the type is what matters
    with pytest.raises(TypeError, match="pass model.params"):
        pe_lib.parameter_count(model)
