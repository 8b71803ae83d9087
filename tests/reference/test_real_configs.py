r"""``pe_lib.config_rope_frequencies`` on the configs of real models, against the rotary module each model runs.

Each entry holds the fields of the model's ``config.json`` that decide its rotary frequencies (the
other fields are left out). The machines this book is built on cannot reach the Hugging Face Hub, so
the values were checked against copies of the files kept in public GitHub repositories, each pinned
to a commit in ``SOURCES``: a verbatim ``config.json``, a config printed by ``AutoConfig.from_pretrained``,
or, for Llama 3.1, Meta's own code with the same constants. Entries whose ``SOURCES`` value is
``None`` were written from the published files as remembered and not re-read (no public copy was
found): Llama 4 Scout, Qwen2-VL, Qwen3-VL, Phi-4-mini, DeepSeek-V3. Phi-3.5-mini's two lists of 48
searched factors are the real ones; Phi-4-mini's are not copied here: the test puts rising random lists
of that length in their place, which exercises the same code.
The reference side builds the model's own config class with ``AutoConfig.for_model`` (so its
``convert_rope_params_to_dict``/``standardize_rope_params`` run: Qwen2-VL's ``"mrope"`` becomes
``"default"``, Phi-3's top-level ``original_max_position_embeddings`` moves into the dict) and then the
model's rotary embedding class, and reads its ``inv_freq`` and ``attention_scaling`` after a forward pass
over ``seq_len`` positions. Tolerance as in ``test_transformers_rope_scaling.py``.
"""

from __future__ import annotations

import importlib
import re
import warnings

import numpy as np
import pytest
import torch
from conftest import EPS32, record
from transformers import AutoConfig

import pe_lib

FREQ_RTOL = 8 * EPS32
HUB = "https://huggingface.co/{}/blob/main/config.json"  # the original; the pinned copies are in SOURCES


def _lists(seed, half=48):
    rng = np.random.default_rng(seed)
    return sorted(float(v) for v in rng.uniform(1.0, 1.2, half)), sorted(float(v) for v in rng.uniform(1.0, 60.0, half))


PHI4_SHORT, PHI4_LONG = _lists(4)

# Phi-3.5-mini-instruct's searched factors, as in SOURCES["Phi-3.5-mini"]
PHI35_SHORT = [
    1.0, 1.0199999809265137, 1.0299999713897705, 1.0299999713897705, 1.0499999523162842,
    1.0499999523162842, 1.0499999523162842, 1.0499999523162842, 1.0499999523162842, 1.0699999332427979,
    1.0999999046325684, 1.1099998950958252, 1.1599998474121094, 1.1599998474121094, 1.1699998378753662,
    1.2899998426437378, 1.339999794960022, 1.679999828338623, 1.7899998426437378, 1.8199998140335083,
    1.8499997854232788, 1.8799997568130493, 1.9099997282028198, 1.9399996995925903, 1.9899996519088745,
    2.0199997425079346, 2.0199997425079346, 2.0199997425079346, 2.0199997425079346, 2.0199997425079346,
    2.0199997425079346, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914,
    2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914,
    2.0799996852874756, 2.0899996757507324, 2.189999580383301, 2.2199995517730713, 2.5899994373321533,
    2.729999542236328, 2.749999523162842, 2.8399994373321533
]
PHI35_LONG = [
    1.0800000429153442, 1.1100000143051147, 1.1399999856948853, 1.340000033378601, 1.5899999141693115,
    1.600000023841858, 1.6200000047683716, 2.620000123977661, 3.2300000190734863, 3.2300000190734863,
    4.789999961853027, 7.400000095367432, 7.700000286102295, 9.09000015258789, 12.199999809265137,
    17.670000076293945, 24.46000099182129, 28.57000160217285, 30.420001983642578, 30.840002059936523,
    32.590003967285156, 32.93000411987305, 42.320003509521484, 44.96000289916992, 50.340003967285156,
    50.45000457763672, 57.55000305175781, 57.93000411987305, 58.21000289916992, 60.1400032043457,
    62.61000442504883, 62.62000274658203, 62.71000289916992, 63.1400032043457, 63.1400032043457,
    63.77000427246094, 63.93000411987305, 63.96000289916992, 63.970001220703125, 64.02999877929688,
    64.06999969482422, 64.08000183105469, 64.12000274658203, 64.41000366210938, 64.4800033569336,
    64.51000213623047, 64.52999877929688, 64.83999633789062
]

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

# name -> the public copy the fields were checked against, pinned to a commit (None: not re-read, see above)
SOURCES = {
    "Llama 3.1 8B": "https://github.com/meta-llama/llama-models/blob/43e87a37feaabe503b90511b93e23266279920da/"
                    "models/llama3/model.py",  # apply_scaling: factor 8, low 1, high 4, original length 8192
    "Llama 3.2 1B": "https://github.com/MatthewGoldsberry/LLM-Projects/blob/bf1733705e944f312bf5564d13932a9b6de21606/"
                    "Llama-3.2-1B/config.json",  # a copy of the Hub file
    "Llama 4 Scout": None,
    "Qwen2-VL 7B": None,
    "Qwen3-VL 8B": None,
    "Phi-3.5-mini": "https://github.com/kevinstephano/thunder_model_blocks/blob/d84dd5ccba375ee539abc702629d048f56c3852b/"
                    "hf_phi3/phi3_rope.py",  # AutoConfig.from_pretrained("microsoft/Phi-3.5-mini-instruct"), printed
    "Phi-4-mini": None,
    "gpt-oss 20B": "https://github.com/jihengzhang/jihz-gpt-oss-20b/blob/7ec89800d2b55da8f65106e8a6f794b7b6433df8/"
                   "gpt-oss-20b/config.json",  # a copy of the Hub file
    "DeepSeek-V3": None,
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
    assert HUB.format(repo)  # the original file
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


def test_every_config_names_its_source():
    """Each entry has a SOURCES line; a checked one is a GitHub file pinned to a 40-digit commit."""
    assert set(SOURCES) == set(REAL)
    for name, url in SOURCES.items():
        assert url is None or re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+/blob/[0-9a-f]{40}/\S+", url), name
    assert sum(url is not None for url in SOURCES.values()) == 4
