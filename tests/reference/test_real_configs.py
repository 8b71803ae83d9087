r"""``pe_lib.config_rope_frequencies`` on the configs of real models, against the rotary module each model runs.

Each entry holds the fields of the model's ``config.json`` that decide its rotary frequencies, with
the Hub page they come from. The machines this book is built on cannot reach the Hub: the values were
written from the published files as remembered, not re-read for this commit, and the links name
``main``, not a commit (pin them, and re-check the values, from a machine that reaches the Hub). The
other fields are left out. Phi-3.5-mini's
and Phi-4-mini's ``short_factor``/``long_factor`` are lists of 48 searched numbers that are not copied
here: the test puts rising random lists of that length in their place, which exercises the same code.
The reference side builds the model's own config class with ``AutoConfig.for_model`` (so its
``convert_rope_params_to_dict``/``standardize_rope_params`` run: Qwen2-VL's ``"mrope"`` becomes
``"default"``, Phi-3's top-level ``original_max_position_embeddings`` moves into the dict) and then the
model's rotary embedding class, and reads its ``inv_freq`` and ``attention_scaling`` after a forward pass
over ``seq_len`` positions. Tolerance as in ``test_transformers_rope_scaling.py``.
"""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest
import torch
from conftest import EPS32, record
from transformers import AutoConfig

import pe_lib

FREQ_RTOL = 8 * EPS32
HUB = "https://huggingface.co/{}/blob/main/config.json"


def _lists(seed, half=48):
    rng = np.random.default_rng(seed)
    return sorted(float(v) for v in rng.uniform(1.0, 1.2, half)), sorted(float(v) for v in rng.uniform(1.0, 60.0, half))


PHI35_SHORT, PHI35_LONG = _lists(35)
PHI4_SHORT, PHI4_LONG = _lists(4)

# name -> (Hub repository, model_type, transformers module, rotary class, config.json fields, sequence lengths)
REAL = {
    "Llama 3.1 8B": ("meta-llama/Llama-3.1-8B", "llama", "llama", "LlamaRotaryEmbedding", {
        "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, "rope_theta": 500000.0,
        "max_position_embeddings": 131072,
        "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                         "original_max_position_embeddings": 8192, "rope_type": "llama3"}}, [None]),
    "Llama 3.2 1B": ("meta-llama/Llama-3.2-1B", "llama", "llama", "LlamaRotaryEmbedding", {
        "head_dim": 64, "hidden_size": 2048, "num_attention_heads": 32, "num_key_value_heads": 8,
        "rope_theta": 500000.0, "max_position_embeddings": 131072,
        "rope_scaling": {"factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                         "original_max_position_embeddings": 8192, "rope_type": "llama3"}}, [None]),
    # its text_config; transformers only warns that high_freq_factor is not above low_freq_factor
    "Llama 4 Scout": ("meta-llama/Llama-4-Scout-17B-16E", "llama4_text", "llama4", "Llama4TextRotaryEmbedding", {
        "head_dim": 128, "hidden_size": 5120, "num_attention_heads": 40, "num_key_value_heads": 8,
        "rope_theta": 500000.0, "max_position_embeddings": 10485760,
        "rope_scaling": {"factor": 16.0, "high_freq_factor": 1.0, "low_freq_factor": 1.0,
                         "original_max_position_embeddings": 8192, "rope_type": "llama3"}}, [None]),
    "Qwen2-VL 7B": ("Qwen/Qwen2-VL-7B-Instruct", "qwen2_vl_text", "qwen2_vl", "Qwen2VLRotaryEmbedding", {
        "hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4, "rope_theta": 1000000.0,
        "max_position_embeddings": 32768, "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}}, [None]),
    "Qwen3-VL 8B": ("Qwen/Qwen3-VL-8B-Instruct", "qwen3_vl_text", "qwen3_vl", "Qwen3VLTextRotaryEmbedding", {
        "head_dim": 128, "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
        "rope_theta": 5000000, "max_position_embeddings": 262144,
        "rope_scaling": {"rope_type": "default", "mrope_section": [24, 20, 20], "mrope_interleaved": True}}, [None]),
    "Phi-3.5-mini": ("microsoft/Phi-3.5-mini-instruct", "phi3", "phi3", "Phi3RotaryEmbedding", {
        "hidden_size": 3072, "num_attention_heads": 32, "num_key_value_heads": 32, "rope_theta": 10000.0,
        "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
        "rope_scaling": {"type": "longrope", "short_factor": PHI35_SHORT, "long_factor": PHI35_LONG}},
        [4096, 4097, 131072]),
    "Phi-4-mini": ("microsoft/Phi-4-mini-instruct", "phi3", "phi3", "Phi3RotaryEmbedding", {
        "hidden_size": 3072, "num_attention_heads": 24, "num_key_value_heads": 8, "partial_rotary_factor": 0.75,
        "rope_theta": 10000.0, "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
        "rope_scaling": {"type": "longrope", "short_factor": PHI4_SHORT, "long_factor": PHI4_LONG}},
        [4096, 4097]),
    "gpt-oss 20B": ("openai/gpt-oss-20b", "gpt_oss", "gpt_oss", "GptOssRotaryEmbedding", {
        "head_dim": 64, "hidden_size": 2880, "num_attention_heads": 64, "num_key_value_heads": 8,
        "rope_theta": 150000, "max_position_embeddings": 131072,
        "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0,
                         "original_max_position_embeddings": 4096, "rope_type": "yarn", "truncate": False}}, [None]),
    "DeepSeek-V3": ("deepseek-ai/DeepSeek-V3", "deepseek_v3", "deepseek_v3", "DeepseekV3RotaryEmbedding", {
        "hidden_size": 7168, "num_attention_heads": 128, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
        "v_head_dim": 128, "rope_theta": 10000, "max_position_embeddings": 163840,
        "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0,
                         "original_max_position_embeddings": 4096, "type": "yarn"}}, [None]),
}


def _theirs(model_type, module_name, cls, fields, seq_len, layer_type=None):
    config = AutoConfig.for_model(model_type, **{k: dict(v) if isinstance(v, dict) else v for k, v in fields.items()})
    rotary = getattr(importlib.import_module(f"transformers.models.{module_name}.modeling_{module_name}"), cls)(config)
    if seq_len is not None:
        rotary(torch.zeros(1, 1, 8), torch.arange(seq_len)[None, :])  # the length-dependent update
    return rotary.inv_freq.double().numpy(), float(rotary.attention_scaling)


@pytest.mark.parametrize("name", list(REAL))
def test_real_config(name):
    repo, model_type, module_name, cls, fields, lengths = REAL[name]
    assert HUB.format(repo)  # the source of the fields
    for seq_len in lengths:
        theirs, their_factor = _theirs(model_type, module_name, cls, fields, seq_len)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pe_lib.RopeScalingWarning)  # Llama 4 Scout: as transformers, a warning
            ours, our_factor = pe_lib.config_rope_frequencies(fields, seq_len=seq_len)
        record(f"real configs: {name}: inv_freq", float(np.max(np.abs(ours - theirs) / ours)), FREQ_RTOL,
               "max |Δω'_i|/ω'_i")
        record(f"real configs: {name}: attention_factor", abs(our_factor - their_factor), 1e-12, "|Δ|")


def test_phi35_attention_factor_needs_the_top_level_length():
    """Without the top-level field (what pe_lib could not receive before), the factor would be 1.0."""
    fields = REAL["Phi-3.5-mini"][4]
    _, with_it = pe_lib.config_rope_frequencies(fields, seq_len=4097)
    _, without = pe_lib.rope_scaling_frequencies(96, fields["rope_scaling"], max_position_embeddings=131072,
                                                 seq_len=4097)
    assert round(with_it, 4) == 1.1902 and without == 1.0


def test_gemma4_layer_types():
    """Gemma 4's text config (the class defaults): default RoPE in sliding layers, 'proportional' in full ones."""
    from transformers.models.gemma4.configuration_gemma4 import Gemma4TextConfig
    from transformers.models.gemma4.modeling_gemma4 import Gemma4TextRotaryEmbedding

    config = Gemma4TextConfig()
    config.allow_global_per_layer_attribute_access = True  # read head_dim, hidden_size globally
    rotary = Gemma4TextRotaryEmbedding(config)
    fields = {"head_dim": config.head_dim, "global_head_dim": 512, "hidden_size": config.hidden_size,
              "num_attention_heads": config.num_attention_heads, "layer_types": list(config.layer_types),
              "max_position_embeddings": config.max_position_embeddings,
              "rope_parameters": {key: dict(value) for key, value in config.rope_parameters.items()}}
    assert fields["rope_parameters"]["full_attention"]["rope_type"] == "proportional"
    for layer_type in ("sliding_attention", "full_attention"):
        theirs = getattr(rotary, f"{layer_type}_inv_freq").double().numpy()
        ours, factor = pe_lib.config_rope_frequencies(fields, layer_type=layer_type)
        turning = ours != 0
        np.testing.assert_array_equal(turning, theirs != 0)  # the same pairs stand still
        record(f"real configs: Gemma 4 {layer_type}: inv_freq",
               float(np.max(np.abs(ours[turning] - theirs[turning]) / ours[turning])), FREQ_RTOL, "max |Δω'_i|/ω'_i")
        assert factor == getattr(rotary, f"{layer_type}_attention_scaling") == 1.0
