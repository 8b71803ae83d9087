"""Which layers rotate and what they see: layer_positions on each model type, masks and offsets, bad input.

The expected lists are written out by hand from the rules in the config classes (every 4th layer NoPE, every
pattern-th layer full, ...); ``make reference`` checks the same functions against transformers' modules.
"""

import numpy as np
import pytest

import pe_lib

R, N = True, False  # rotates / NoPE, to write the expected patterns compactly


def kinds(layers):
    return [layer["attention"] for layer in layers]


def rotates(layers):
    return [layer["rope"] for layer in layers]


def test_llama4_interval_chunks_and_temperature():
    layers = pe_lib.layer_positions({"model_type": "llama4", "text_config": {
        "model_type": "llama4_text", "num_hidden_layers": 8, "attention_chunk_size": 8192}})
    assert rotates(layers) == [R, R, R, N, R, R, R, N]
    assert kinds(layers) == ["chunked", "chunked", "chunked", "full"] * 2
    assert [la["window"] for la in layers[:4]] == [8192, 8192, 8192, None]
    assert layers[3]["temperature"] and not layers[0]["temperature"]
    assert (layers[3]["floor_scale"], layers[3]["attn_scale"]) == (8192, 0.1)  # the class defaults
    assert layers[3]["rope_parameters"] is None
    assert layers[0]["rope_parameters"] == {"rope_type": "default", "rope_theta": 500000.0}


def test_llama4_list_wins_and_empty_list_means_interval():
    layers = pe_lib.layer_positions({"model_type": "llama4_text", "num_hidden_layers": 3, "no_rope_layers": [0, 1, 0],
                                     "no_rope_layer_interval": 2, "attn_temperature_tuning": False})
    assert rotates(layers) == [N, R, N] and kinds(layers) == ["full", "chunked", "full"]
    assert not any(la["temperature"] for la in layers) and "floor_scale" not in layers[0]
    empty = pe_lib.layer_positions({"model_type": "llama4_text", "num_hidden_layers": 4, "no_rope_layers": [],
                                    "no_rope_layer_interval": 2})
    assert rotates(empty) == [R, N, R, N]


def test_llama4_given_layer_types_are_kept():
    layers = pe_lib.layer_positions({"model_type": "llama4_text", "num_hidden_layers": 2, "no_rope_layers": [1, 0],
                                     "layer_types": ["full_attention", "chunked_attention"],
                                     "attention_chunk_size": 16})
    assert kinds(layers) == ["full", "chunked"] and rotates(layers) == [R, N]
    assert layers[1]["window"] == 16 and layers[1]["temperature"]


def test_smollm3_interval_and_sliding_nope_layers():
    layers = pe_lib.layer_positions({"model_type": "smollm3", "num_hidden_layers": 8})
    assert rotates(layers) == [R, R, R, N] * 2 and set(kinds(layers)) == {"full"}
    assert layers[0]["rope_parameters"]["rope_theta"] == 2000000.0  # the class default
    sliding = pe_lib.layer_positions({"model_type": "smollm3", "num_hidden_layers": 4, "no_rope_layer_interval": 2,
                                      "use_sliding_window": True, "sliding_window": 64, "rope_theta": 5e6})
    assert kinds(sliding) == ["full", "sliding", "full", "sliding"]  # the NoPE layers slide (the class's rule)
    assert [la["window"] for la in sliding] == [None, 64, None, 64]
    assert sliding[0]["rope_parameters"]["rope_theta"] == 5e6
    off = pe_lib.layer_positions({"model_type": "smollm3", "num_hidden_layers": 4, "use_sliding_window": False,
                                  "sliding_window": 64})
    assert set(kinds(off)) == {"full"}


def test_cohere2_rotates_only_in_sliding_layers():
    layers = pe_lib.layer_positions({"model_type": "cohere2", "num_hidden_layers": 8, "sliding_window": 4096,
                                     "sliding_window_pattern": 4, "rope_theta": 50000.0})
    assert kinds(layers) == ["sliding", "sliding", "sliding", "full"] * 2
    assert rotates(layers) == [R, R, R, N] * 2
    assert layers[0]["rope_parameters"] == {"rope_type": "default", "rope_theta": 50000.0}
    assert not any(la["temperature"] for la in layers)
    listed = pe_lib.layer_positions({"model_type": "cohere2", "num_hidden_layers": 2,
                                     "layer_types": ["full_attention", "sliding_attention"]})
    assert rotates(listed) == [N, R] and listed[1]["window"] == 4096  # the class's default window


def test_gemma3_bases_per_layer_type():
    layers = pe_lib.layer_positions({"model_type": "gemma3", "text_config": {
        "num_hidden_layers": 12, "sliding_window": 1024, "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
        "rope_scaling": {"factor": 8.0, "rope_type": "linear"}}})  # no model_type inside: gemma3_text assumed
    assert kinds(layers) == ["sliding"] * 5 + ["full"] + ["sliding"] * 5 + ["full"]
    assert all(rotates(layers))
    assert layers[0]["rope_parameters"] == {"rope_type": "default", "rope_theta": 10000.0}
    assert layers[5]["rope_parameters"] == {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0}
    nested = pe_lib.layer_positions({"model_type": "gemma3_text", "num_hidden_layers": 2, "sliding_window_pattern": 2,
                                     "partial_rotary_factor": 0.5,
                                     "rope_parameters": {"sliding_attention": {"rope_type": "default",
                                                                               "rope_theta": 123.0},
                                                         "full_attention": None}})
    assert nested[0]["rope_parameters"] == {"rope_type": "default", "rope_theta": 123.0, "partial_rotary_factor": 0.5}
    assert nested[1]["rope_parameters"]["rope_theta"] == 1000000.0
    defaults = pe_lib.layer_positions({"model_type": "gemma3_text"})
    assert len(defaults) == 26 and defaults[0]["window"] == 4096


def test_old_type_key_and_rope_parameters():
    layers = pe_lib.layer_positions({"model_type": "smollm3", "num_hidden_layers": 1,
                                     "rope_parameters": {"type": "linear", "factor": 2.0, "rope_theta": 7.0}})
    assert layers[0]["rope_parameters"] == {"rope_type": "linear", "factor": 2.0, "rope_theta": 7.0}


def test_masks_by_hand():
    full = pe_lib.layer_attention_mask({"attention": "full"}, 4)
    np.testing.assert_array_equal(full, np.tril(np.ones((4, 4), dtype=bool)))
    sliding = pe_lib.layer_attention_mask({"attention": "sliding", "window": 2}, 4)
    np.testing.assert_array_equal(sliding, [[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]])
    chunked = pe_lib.layer_attention_mask({"attention": "chunked", "window": 2}, 5)
    np.testing.assert_array_equal(chunked, [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 1, 1, 0],
                                            [0, 0, 0, 0, 1]])


def test_largest_offset():
    assert pe_lib.largest_offset({"attention": "full"}, 100) == 99
    assert pe_lib.largest_offset({"attention": "sliding", "window": 4096}, 100_000) == 4095
    assert pe_lib.largest_offset({"attention": "chunked", "window": 8192}, 1000) == 999


@pytest.mark.parametrize("config, match", [
    ({"model_type": "llama"}, "knows the model types"),
    ({}, "knows the model types"),
    ({"model_type": "llama4"}, "text_config"),
    ({"model_type": "smollm3", "num_hidden_layers": 4, "no_rope_layers": [1, 1, 0]}, "3 flags"),
    ({"model_type": "smollm3", "num_hidden_layers": 2, "no_rope_layers": [1, 2]}, "0 \\(NoPE\\) or 1"),
    ({"model_type": "smollm3", "num_hidden_layers": 2, "no_rope_layers": [True, 1]}, "0 \\(NoPE\\) or 1"),
    ({"model_type": "smollm3", "num_hidden_layers": 2, "no_rope_layers": []}, "0 flags"),
    ({"model_type": "cohere2", "num_hidden_layers": 2, "layer_types": ["full_attention"]}, "1 entries"),
    ({"model_type": "cohere2", "num_hidden_layers": 1, "layer_types": ["chunked_attention"]}, "not one a cohere2"),
    ({"model_type": "llama4_text", "num_hidden_layers": 1, "layer_types": ["sliding_attention"]}, "not one a llama4"),
    ({"model_type": "cohere2", "num_hidden_layers": 1, "sliding_window": None}, "sets no sliding_window"),
    ({"model_type": "llama4_text", "num_hidden_layers": 1, "attention_chunk_size": None}, "attention_chunk_size"),
    ({"model_type": "cohere2", "num_hidden_layers": 0}, "num_hidden_layers"),
    ({"model_type": "cohere2", "num_hidden_layers": 10**9}, "not a model's depth"),
    ({"model_type": "smollm3", "no_rope_layer_interval": 0}, "no_rope_layer_interval"),
    ({"model_type": "gemma3_text", "use_bidirectional_attention": True}, "bidirectional"),
    ({"model_type": "gemma3_text", "rope_parameters": {"rope_type": "linear"}}, "one dict per layer type"),
    ({"model_type": "gemma3_text", "rope_parameters": {"global": {"rope_type": "default"}}}, "unknown layer types"),
    ({"model_type": "smollm3", "rope_parameters": {"full_attention": {"rope_theta": 1.0}}}, "one rope dict"),
    ({"model_type": "smollm3", "rope_theta": None}, "rope_theta must be a number"),
])
def test_bad_configs_are_refused(config, match):
    with pytest.raises(ValueError, match=match):
        pe_lib.layer_positions(config)


@pytest.mark.parametrize("config", [
    [1, 2],
    {"model_type": "smollm3", "no_rope_layers": "1110"},
    {"model_type": "cohere2", "layer_types": "full_attention"},
    {"model_type": "smollm3", "rope_scaling": "yarn"},
    {"model_type": "gemma3_text", "rope_scaling": "linear"},
])
def test_wrong_types_are_refused(config):
    with pytest.raises(TypeError):
        pe_lib.layer_positions(config)


def test_bad_layers_for_masks():
    with pytest.raises(TypeError, match="layer_positions"):
        pe_lib.layer_attention_mask("full", 3)
    with pytest.raises(ValueError, match="attention"):
        pe_lib.layer_attention_mask({"attention": "global"}, 3)
    with pytest.raises(ValueError, match="window"):
        pe_lib.largest_offset({"attention": "sliding", "window": 0}, 3)
    with pytest.raises(ValueError, match="seq_len"):
        pe_lib.layer_attention_mask({"attention": "full"}, 0)
