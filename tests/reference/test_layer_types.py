r"""``pe_lib.layer_positions`` and ``pe_lib.nope_temperature`` against transformers' Llama 4, SmolLM3, Cohere 2 and
Gemma 3 modules.

Tiny models are built from each config class (no download), from config dicts that give the lists
(``no_rope_layers``, ``layer_types``), only the pattern fields (``no_rope_layer_interval``,
``sliding_window_pattern``), or nothing (the class defaults). For every layer the comparison is by behaviour,
not by reading the code:

* **which layers rotate**: the layer's attention module is run on the same hidden states with the rotary
  embeddings of positions ``0..n-1`` and of positions ``0, 3, 6, ...``; its output changes if and only if the
  layer applies RoPE (``|Δ|`` is then far above float32 rounding, and exactly 0 for a NoPE layer);
* **which keys a query sees**: the whole model runs with eager attention and returns its attention weights;
  the entries that are exactly 0 are the keys the layer's mask hides, compared with
  ``pe_lib.layer_attention_mask`` over more tokens than the window or chunk;
* **which base**: the layer's rotary frequencies (``inv_freq``, or Gemma 3's per-layer-type buffer) against
  ``pe_lib.rope_scaling_frequencies`` of the layer's ``rope_parameters``;
* **Llama 4's temperature**: a NoPE layer's attention weights against a softmax computed here from its
  ``q_proj``/``k_proj`` with the queries scaled by ``pe_lib.nope_temperature``, over positions that cross
  several multiples of ``floor_scale``, with and without a cache holding earlier tokens.

The real configs (``REAL``) hold the position fields of published ``config.json`` files, each pinned in
``SOURCES``; the config class derives its lists from them and each layer's attention module (built at a tiny
width, the position fields untouched) is read for ``use_rope`` and ``sliding_window``.
"""

from __future__ import annotations

import copy
import importlib
import re

import numpy as np
import pytest
import torch
from conftest import EPS32, record
from transformers import AutoConfig, AutoModel

import pe_lib

TINY = {"hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
        "intermediate_size": 32, "vocab_size": 64, "max_position_embeddings": 256, "pad_token_id": 0}
LLAMA4_TINY = {**TINY, "intermediate_size_mlp": 32, "num_local_experts": 2, "pad_token_id": 0,
               "bos_token_id": 1, "eos_token_id": 2}

# name -> (model_type, config fields)
CASES = {
    "llama4 interval": ("llama4_text", {**LLAMA4_TINY, "num_hidden_layers": 6, "no_rope_layer_interval": 3,
                                        "attention_chunk_size": 5, "floor_scale": 4, "attn_scale": 0.5}),
    "llama4 list": ("llama4_text", {**LLAMA4_TINY, "num_hidden_layers": 5, "no_rope_layers": [0, 1, 1, 0, 1],
                                    "attention_chunk_size": 7, "rope_theta": 1000.0}),
    "llama4 empty list": ("llama4_text", {**LLAMA4_TINY, "num_hidden_layers": 4, "no_rope_layers": [],
                                          "attention_chunk_size": 6, "attn_temperature_tuning": False}),
    "llama4 defaults": ("llama4_text", {**LLAMA4_TINY, "num_hidden_layers": 8, "attention_chunk_size": 6}),
    "llama4 llama3 scaling": ("llama4_text", {**LLAMA4_TINY, "num_hidden_layers": 4, "attention_chunk_size": 6,
                                              "rope_scaling": {"rope_type": "llama3", "factor": 8.0,
                                                               "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                                               "original_max_position_embeddings": 64}}),
    "smollm3 interval": ("smollm3", {**TINY, "num_hidden_layers": 8}),
    "smollm3 list": ("smollm3", {**TINY, "num_hidden_layers": 4, "no_rope_layers": [1, 0, 0, 1],
                                 "rope_theta": 5000000.0}),
    "smollm3 sliding": ("smollm3", {**TINY, "num_hidden_layers": 6, "no_rope_layer_interval": 2,
                                    "use_sliding_window": True, "sliding_window": 5}),
    "smollm3 yarn": ("smollm3", {**TINY, "num_hidden_layers": 4, "rope_scaling": {
        "rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 128}}),
    "cohere2 pattern": ("cohere2", {**TINY, "num_hidden_layers": 8, "sliding_window": 6, "rope_theta": 50000.0}),
    "cohere2 pattern 3": ("cohere2", {**TINY, "num_hidden_layers": 6, "sliding_window": 4,
                                      "sliding_window_pattern": 3}),
    "cohere2 list": ("cohere2", {**TINY, "num_hidden_layers": 4, "sliding_window": 5,
                                 "layer_types": ["full_attention", "sliding_attention", "full_attention",
                                                 "sliding_attention"]}),
    "gemma3 pattern": ("gemma3_text", {**TINY, "num_hidden_layers": 7, "sliding_window": 5,
                                       "rope_local_base_freq": 10000.0, "rope_theta": 1000000.0,
                                       "query_pre_attn_scalar": 8}),
    "gemma3 pattern 3, linear": ("gemma3_text", {**TINY, "num_hidden_layers": 6, "sliding_window": 4,
                                                 "sliding_window_pattern": 3, "query_pre_attn_scalar": 8,
                                                 "rope_scaling": {"rope_type": "linear", "factor": 8.0}}),
    "gemma3 nested": ("gemma3_text", {**TINY, "num_hidden_layers": 4, "sliding_window": 3, "query_pre_attn_scalar": 8,
                                      "layer_types": ["sliding_attention", "full_attention", "full_attention",
                                                      "sliding_attention"],
                                      "rope_parameters": {"full_attention": {"rope_type": "default",
                                                                             "rope_theta": 500000.0},
                                                          "sliding_attention": {"rope_type": "default",
                                                                                "rope_theta": 2000.0}}}),
    "gemma3 defaults": ("gemma3_text", {**TINY, "num_hidden_layers": 7, "sliding_window": 5,
                                        "query_pre_attn_scalar": 8}),
}
SEQ = 17  # longer than every window and chunk above


def _head_dim(config):
    return getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads


def _build(model_type, fields):
    config = AutoConfig.for_model(model_type, **copy.deepcopy(fields))
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    model = AutoModel.from_config(config, attn_implementation="eager").float().eval()
    return config, model


def _rotary(model, config, layer_type, positions):
    x = torch.zeros(1, positions.shape[-1], config.hidden_size)
    if config.model_type == "gemma3_text":
        return model.rotary_emb(x, positions, layer_type)
    return model.rotary_emb(x, positions)


def _inv_freq(model, config, layer_type):
    if config.model_type == "gemma3_text":
        return getattr(model.rotary_emb, f"{layer_type}_inv_freq").double().numpy()
    return model.rotary_emb.inv_freq.double().numpy()


@pytest.mark.parametrize("name", list(CASES))
def test_layers_rotate_see_and_turn_as_transformers_runs_them(name):
    model_type, fields = CASES[name]
    config, model = _build(model_type, fields)
    ours = pe_lib.layer_positions({"model_type": model_type, **copy.deepcopy(fields)})
    assert len(ours) == config.num_hidden_layers == len(model.layers)
    torch.manual_seed(1)
    hidden = torch.randn(1, SEQ, config.hidden_size)
    straight, dilated = torch.arange(SEQ)[None], 3 * torch.arange(SEQ)[None]
    out = model(input_ids=torch.randint(3, config.vocab_size, (1, SEQ)), output_attentions=True)
    for i, (layer, theirs_weights) in enumerate(zip(ours, out.attentions, strict=True)):
        layer_type = config.layer_types[i]
        attn = model.layers[i].self_attn
        outputs = [attn(hidden_states=hidden, position_embeddings=_rotary(model, config, layer_type, p),
                        attention_mask=None)[0] for p in (straight, dilated)]
        change = float((outputs[0] - outputs[1]).abs().max())
        if layer["rope"]:
            size = float(outputs[0].abs().max())
            assert change > 1e-3 * size, f"{name}: layer {i} should rotate; positions changed it by {change:.3g}"
        else:
            record(f"layer types: {name}: NoPE layers ignore positions", change, 0.0, "max |Δ output|")
        seen = (theirs_weights[0] != 0).numpy()  # (heads, n, n)
        mask = pe_lib.layer_attention_mask(layer, SEQ)
        assert all(np.array_equal(head, mask) for head in seen), f"{name}: layer {i} ({layer['attention']})"
        assert pe_lib.largest_offset(layer, SEQ) == max(q - k for q, k in zip(*np.nonzero(seen[0]), strict=True))
        if layer["rope"]:
            theirs = _inv_freq(model, config, layer_type)
            ours_freq, _ = pe_lib.rope_scaling_frequencies(_head_dim(config), layer["rope_parameters"],
                                                           max_position_embeddings=config.max_position_embeddings)
            record(f"layer types: {name}: inv_freq", float(np.max(np.abs(ours_freq - theirs) / ours_freq)),
                   8 * EPS32, "max |Δω|/ω")
            params = config.rope_parameters
            params = params[layer_type] if config.model_type == "gemma3_text" else params
            assert float(params["rope_theta"]) == layer["rope_parameters"]["rope_theta"]


def _their_nope_weights(attn, hidden, past):
    """A Llama 4 NoPE layer's attention weights as transformers computes them (eager), with a cache of `past`."""
    from transformers import DynamicCache
    cache = DynamicCache(config=attn.config)
    if past is not None:
        k = attn.k_proj(past).view(1, past.shape[1], -1, attn.head_dim).transpose(1, 2)
        v = attn.v_proj(past).view(1, past.shape[1], -1, attn.head_dim).transpose(1, 2)
        cache.update(k, v, attn.layer_idx)
    n_past = 0 if past is None else past.shape[1]
    total = n_past + hidden.shape[1]
    mask = torch.full((1, 1, hidden.shape[1], total), float("-inf"))
    mask = torch.where(torch.arange(total)[None, :] <= n_past + torch.arange(hidden.shape[1])[:, None], 0.0, mask)
    cos_sin = torch.ones(1, hidden.shape[1], attn.head_dim // 2, dtype=torch.complex64)  # unused: a NoPE layer
    return attn(hidden_states=hidden, position_embeddings=cos_sin, attention_mask=mask, past_key_values=cache)[1]


@pytest.mark.parametrize("n_past", [0, 9])
def test_llama4_temperature_is_nope_temperature(n_past):
    fields = {**LLAMA4_TINY, "num_hidden_layers": 4, "attention_chunk_size": 6, "floor_scale": 3, "attn_scale": 0.7}
    config, model = _build("llama4_text", fields)
    layer = pe_lib.layer_positions({"model_type": "llama4_text", **fields})[3]
    assert layer["temperature"] and not layer["rope"] and (layer["floor_scale"], layer["attn_scale"]) == (3, 0.7)
    attn = model.layers[3].self_attn
    torch.manual_seed(2)
    past = torch.randn(1, n_past, config.hidden_size) if n_past else None
    hidden = torch.randn(1, 12, config.hidden_size)
    theirs = _their_nope_weights(attn, hidden, past)[0].double().numpy()  # (heads, 12, n_past + 12)
    everything = hidden if past is None else torch.cat([past, hidden], dim=1)
    heads, d = config.num_attention_heads, _head_dim(config)
    q = attn.q_proj(hidden).view(12, heads, d).double().numpy()
    k = attn.k_proj(everything).view(n_past + 12, -1, d).double().numpy()
    k = np.repeat(k, heads // k.shape[1], axis=1)
    tau = pe_lib.nope_temperature(n_past + np.arange(12), layer["floor_scale"], layer["attn_scale"])
    assert tau.max() > 1.5  # the positions cross several multiples of floor_scale
    logits = np.einsum("qhd,khd->hqk", q * tau[:, None, None], k) / np.sqrt(d)
    logits = np.where(np.arange(n_past + 12)[None, None, :] <= n_past + np.arange(12)[None, :, None], logits, -np.inf)
    ours = pe_lib.softmax(logits, axis=-1)
    record("layer types: Llama 4 temperature, attention weights", float(np.max(np.abs(ours - theirs))), 64 * EPS32,
           "max |Δ weight|")
    untuned = pe_lib.softmax(np.where(np.isinf(logits), -np.inf, logits / tau[None, :, None]), axis=-1)
    assert np.max(np.abs(untuned - theirs)) > 1e-3  # without the temperature the weights differ: it is tested


def test_llama4_config_class_refuses_an_integer_temperature_flag():
    """Scout's config.json as transformers 4.51 printed it holds "attn_temperature_tuning": 4; 5.23.0's strict
    config class refuses the int. pe_lib reads the flag as the modeling code does, by its truth value."""
    from huggingface_hub.errors import StrictDataclassFieldValidationError

    with pytest.raises(StrictDataclassFieldValidationError, match="attn_temperature_tuning"):
        AutoConfig.for_model("llama4_text", attn_temperature_tuning=4)
    assert pe_lib.layer_positions({"model_type": "llama4_text", "num_hidden_layers": 4,
                                   "attn_temperature_tuning": 4})[3]["temperature"]


def test_the_class_defaults_pe_lib_assumes_are_the_classes():
    """Fields a config.json leaves out: pe_lib's defaults against each config class built without them."""
    for model_type in ("llama4_text", "smollm3", "cohere2", "gemma3_text"):
        config = AutoConfig.for_model(model_type)
        ours = pe_lib.layer_positions({"model_type": model_type})
        assert len(ours) == config.num_hidden_layers, model_type
        kinds = [{"full_attention": "full", "sliding_attention": "sliding", "chunked_attention": "chunked"}[t]
                 for t in config.layer_types]
        assert [layer["attention"] for layer in ours] == kinds, model_type
        windows = {"sliding": getattr(config, "sliding_window", None),
                   "chunked": getattr(config, "attention_chunk_size", None)}
        assert [layer["window"] for layer in ours] == [windows.get(k) for k in kinds], model_type
        params = config.rope_parameters
        for layer, layer_type in zip(ours, config.layer_types, strict=True):
            if layer["rope"]:
                want = params[layer_type] if model_type == "gemma3_text" else params
                assert layer["rope_parameters"]["rope_theta"] == float(want["rope_theta"]), model_type
        if model_type == "llama4_text":
            nope = [layer for layer in ours if not layer["rope"]]
            assert {(la["floor_scale"], la["attn_scale"], la["temperature"]) for la in nope} == {
                (config.floor_scale, config.attn_scale, config.attn_temperature_tuning)}


# name -> (module, attention class, config.json position fields)
REAL = {
    "Llama 4 Scout": ("llama4", "Llama4TextAttention", {
        "model_type": "llama4", "text_config": {
            "model_type": "llama4_text", "attention_chunk_size": 8192, "attn_scale": 0.1,
            "attn_temperature_tuning": 4, "floor_scale": 8192, "head_dim": 128, "hidden_size": 5120,
            "max_position_embeddings": 262144, "no_rope_layers": [1, 1, 1, 0] * 12, "num_attention_heads": 40,
            "num_hidden_layers": 48, "num_key_value_heads": 8, "rope_theta": 500000.0,
            "rope_scaling": {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                             "original_max_position_embeddings": 8192, "rope_type": "llama3"}}}),
    "SmolLM3 3B": ("smollm3", "SmolLM3Attention", {
        "model_type": "smollm3", "hidden_size": 2048, "max_position_embeddings": 65536, "no_rope_layer_interval": 4,
        "num_attention_heads": 16, "num_hidden_layers": 36, "num_key_value_heads": 4, "rope_scaling": None,
        "rope_theta": 5000000.0, "sliding_window": None, "use_sliding_window": False}),
    "Command R7B": ("cohere2", "Cohere2Attention", {
        "model_type": "cohere2", "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
        "num_hidden_layers": 32, "sliding_window": 4096, "sliding_window_pattern": 4, "rope_theta": 50000.0}),
    "Gemma 3 1B": ("gemma3", "Gemma3Attention", {
        "model_type": "gemma3_text", "head_dim": 256, "hidden_size": 1152, "max_position_embeddings": 32768,
        "num_attention_heads": 4, "num_hidden_layers": 26, "num_key_value_heads": 1, "query_pre_attn_scalar": 256,
        "rope_local_base_freq": 10000, "rope_scaling": None, "rope_theta": 1000000, "sliding_window": 512,
        "sliding_window_pattern": 6}),
}
GH = "https://github.com/"
SOURCES = {
    "Llama 4 Scout": (GH + "meta-llama/llama-models/blob/00bb6d68619544d84e504f5323b4119258ebb60f/"
                      "models/llama4/args.py",
                      "Meta's code: floor_scale 8192 and attn_scale 0.1, a nope_layer_interval and "
                      "attention_chunk_size; the text_config fields are those of the 17B-16E config.json as "
                      "transformers 4.51.0 printed it "
                      "(a copy found in a public notes file, not pinned: attention_chunk_size 8192, "
                      "attn_temperature_tuning 4, no_rope_layers [1, 1, 1, 0] * 12, rope_theta 500000)"),
    "SmolLM3 3B": (GH + "huggingface/blog/blob/41cf962af2c948049acafb4056eeabfc26a3bb3f/smollm3.md",
                   "the release post: NoPE in every 4th layer, 36 layers (the fields as a transcription of "
                   "SmolLM3-3B-Base's config.json in a public repository holds them: rope_theta 5000000, "
                   "no_rope_layer_interval 4, use_sliding_window false)"),
    "Command R7B": (GH + "huggingface/transformers/blob/3e7da9f11075a6e34d572fe04d28485a3989d274/"
                    "docs/source/en/model_doc/cohere2.md",
                    "transformers' page: three sliding-window layers (window 4096) with RoPE, then a global layer "
                    "without positional embeddings (32 layers, base 50000, pattern 4 as a KerasHub preset gives them)"),
    "Gemma 3 1B": (GH + "Liwink/gemma-jax/blob/c6f41d37e374a9b9d74fe2542a7bdb914bf3341e/models/README.md",
                   "a verbatim copy of gemma-3-1b-it's config.json (transformers_version 4.52.4)"),
}
TINY_WIDTH = {"hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16}


@pytest.mark.parametrize("name", list(REAL))
def test_real_config(name):
    module_name, cls, fields = REAL[name]
    ours = pe_lib.layer_positions(fields)
    text = fields.get("text_config", fields)
    kwargs = {k: v for k, v in copy.deepcopy(text).items() if k != "model_type"}
    if "attn_temperature_tuning" in kwargs:
        kwargs["attn_temperature_tuning"] = bool(kwargs["attn_temperature_tuning"])  # 5.23.0 wants a bool
    config = AutoConfig.for_model(text["model_type"], **kwargs)
    head_dim = _head_dim(config)
    small = AutoConfig.for_model(text["model_type"], **{**kwargs, **TINY_WIDTH})
    attention = getattr(importlib.import_module(f"transformers.models.{module_name}.modeling_{module_name}"), cls)
    for i, layer in enumerate(ours):
        module = attention(small, layer_idx=i)
        rotates = getattr(module, "use_rope", None)
        if rotates is None:  # Cohere 2 rotates where it has a window; Gemma 3 everywhere
            rotates = module.sliding_window is not None if module_name == "cohere2" else True
        assert bool(rotates) == layer["rope"], (name, i)
        kind = {"full_attention": "full", "sliding_attention": "sliding",
                "chunked_attention": "chunked"}[config.layer_types[i]]
        assert layer["attention"] == kind, (name, i)
        if kind == "sliding":
            assert layer["window"] == module.sliding_window == config.sliding_window, (name, i)
        if kind == "chunked":
            assert layer["window"] == config.attention_chunk_size, (name, i)
        if layer["rope"]:
            params = config.rope_parameters
            params = params[config.layer_types[i]] if module_name == "gemma3" else params
            theirs, _ = pe_lib.rope_scaling_frequencies(head_dim, {k: v for k, v in params.items()},
                                                        max_position_embeddings=config.max_position_embeddings)
            ours_freq, _ = pe_lib.rope_scaling_frequencies(head_dim, layer["rope_parameters"],
                                                           max_position_embeddings=config.max_position_embeddings)
            np.testing.assert_array_equal(ours_freq, theirs)
        if layer["temperature"]:
            assert (layer["floor_scale"], layer["attn_scale"]) == (config.floor_scale, config.attn_scale)
    rotating = sum(la["rope"] for la in ours)
    record(f"layer types: real {name}: layers", 0.0, 0.0, f"{len(ours)} layers, {rotating} rotate")


def test_real_layer_counts():
    """What the chapter quotes: RoPE layers, their windows, and the base per layer type."""
    counts = {name: (sum(la["rope"] for la in pe_lib.layer_positions(f)), len(pe_lib.layer_positions(f)))
              for name, (_, _, f) in REAL.items()}
    assert counts == {"Llama 4 Scout": (36, 48), "SmolLM3 3B": (27, 36), "Command R7B": (24, 32),
                      "Gemma 3 1B": (26, 26)}
    gemma = pe_lib.layer_positions(REAL["Gemma 3 1B"][2])
    assert {la["rope_parameters"]["rope_theta"] for la in gemma if la["attention"] == "sliding"} == {10000.0}
    assert {la["rope_parameters"]["rope_theta"] for la in gemma if la["attention"] == "full"} == {1000000.0}


def test_every_real_config_names_its_source():
    assert set(SOURCES) == set(REAL)
    for name, (url, what) in SOURCES.items():
        assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+/blob/[0-9a-f]{40}/\S+", url), name
        assert what, name
