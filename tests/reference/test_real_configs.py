r"""``pe_lib.config_rope_frequencies`` on the configs of real models, against the rotary module each model runs.

Each entry holds the fields of the model's ``config.json`` that decide its rotary frequencies (the
other fields are left out). The machines this book is built on cannot reach the Hugging Face Hub, so
the values were checked against public GitHub repositories, pinned to a commit in ``SOURCES``: copies
of the ``config.json`` (verbatim, as ``AutoConfig`` printed it, or as an engine's preset or test
fixture holds it) or, where no copy was found, the model's reference code with the same constants.
``SOURCES`` says what each one confirms. The few fields the frequencies do not depend on that a source
does not show (a ``max_position_embeddings``, DeepSeek-V3's ``mscale_all_dim``) were written from the
published files as remembered and not re-read. Phi-3.5-mini's and Phi-4-mini's lists of 48 searched
factors are the real ones (two sources agree on Phi-3.5's).
The reference side builds the model's own config class with ``AutoConfig.for_model`` (so its
``convert_rope_params_to_dict``/``standardize_rope_params`` run: Qwen2-VL's ``"mrope"`` becomes
``"default"``, Phi-3's top-level ``original_max_position_embeddings`` moves into the dict) and then the
model's rotary embedding class, and reads its ``inv_freq`` and ``attention_scaling`` after a forward pass
over ``seq_len`` positions. Tolerance as in ``test_transformers_rope_scaling.py``.
"""

from __future__ import annotations

import copy
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


# The searched factors of Phi-3.5-mini-instruct and Phi-4-mini-instruct, as in SOURCES
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

PHI4_SHORT = [1.0] * 48
PHI4_LONG = [
    1.0, 1.118320672, 1.250641126, 1.398617824, 1.564103225, 1.74916897, 1.956131817, 2.187582649,
    2.446418898, 2.735880826, 3.059592084, 3.421605075, 3.826451687, 4.279200023, 4.785517845,
    5.351743533, 5.984965424, 6.693110555, 7.485043894, 8.370679318, 9.36110372, 10.4687158, 11.70738129,
    13.09260651, 14.64173252, 16.37415215, 18.31155283, 20.47818807, 22.90118105, 25.61086418,
    28.64115884, 32.03, 32.1, 32.13, 32.23, 32.6, 32.61, 32.64, 32.66, 32.7, 32.71, 32.93, 32.97, 33.28,
    33.49, 33.5, 44.16, 47.77
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
    "Llama 4 Scout": ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "llama4_text", "llama4",
                      "Llama4TextRotaryEmbedding", {
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

# name -> (the public GitHub file the fields were checked against, pinned to a commit;
# what it confirms)
GH = "https://github.com/"
MLC = GH + "mlc-ai/mlc-llm/blob/79d603f085f50500e9509fa01785ffa7ecfaaa93/python/mlc_llm/model/model_preset.py"
SOURCES = {
    "Llama 3.1 8B": (GH + "NVIDIA/TensorRT-LLM/blob/151c21c6a0034712a71fb0352cf7c75ea07b7b5b/"
                     "tests/unittest/_torch/modeling/test_modeling_llama.py",
                     "LLAMA_3_1_8B_CONFIG, the whole config.json; MLC's llama3_1_8b preset agrees"),
    "Llama 3.2 1B": (GH + "MatthewGoldsberry/LLM-Projects/blob/bf1733705e944f312bf5564d13932a9b6de21606/"
                     "Llama-3.2-1B/config.json", "a copy of the file; MLC's llama3_2_1b preset agrees"),
    "Llama 4 Scout": (GH + "meta-llama/llama-models/blob/a9c89c471f793423afd4cc3ca8671d6e56fe64cb/"
                      "models/llama4/args.py#L72-L107",
                      "Meta's code: base 500000, and only Scout uses scaled RoPE, with factor 16 and high_freq_factor "
                      "1 (low 1 and length 8192 in models/llama4/model.py's apply_scaling); transformers' "
                      "convert_llama4_weights_to_hf.py writes them as a llama3 rope_scaling, with "
                      "max_position_embeddings 10485760 for the 16-expert instruct model"),
    "Qwen2-VL 7B": (GH + "mindspore-lab/mindone/blob/4c5a783c5ae05496b653cb585e49e3a967ad9515/"
                    "mindone/transformers/models/qwen2_vl/modeling_qwen2_vl.py",
                    "the config_json of the file's __main__ block, labelled 'Qwen2-VL-7B-Instruct config.json', "
                    "the whole config.json (MindSpore's port of transformers)"),
    "Qwen3-VL 8B": (GH + "pytorch/torchtitan/blob/fc594ef77416e254c9a4cf8205597cbf247db0d4/"
                    "torchtitan/experiments/qwen3_vl/__init__.py#L165-L201",
                    "the 8B variant: 32 heads of 128, 8 KV heads, base 5000000, mrope_section [24, 20, 20], "
                    "interleaved (max_position_embeddings not shown)"),
    "Phi-3.5-mini": (MLC + "#L497-L632", "the phi-3_5 preset, the whole config.json; AutoConfig's print of it in "
                     "kevinstephano/thunder_model_blocks at d84dd5cc (hf_phi3/phi3_rope.py) has the same lists"),
    "Phi-4-mini": (MLC + "#L782-L923", "the phi-4 preset (_name_or_path Phi-4-mini-instruct), the whole config.json"),
    "gpt-oss 20B": (GH + "jihengzhang/jihz-gpt-oss-20b/blob/7ec89800d2b55da8f65106e8a6f794b7b6433df8/"
                    "gpt-oss-20b/config.json", "a copy of the file"),
    "DeepSeek-V3": (GH + "deepseek-ai/DeepSeek-V3/blob/9b4e9788e4a3a731f7567338ed15d3ec549ce03b/"
                    "inference/model.py#L78-L86",
                    "DeepSeek's inference code: rope head 64, base 10000, factor 40, original length 4096, "
                    "beta 32 and 1, mscale 1 (the 671B sizes in inference/configs/config_671B.json; "
                    "mscale_all_dim and max_position_embeddings not shown)"),
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
    """Each entry has a SOURCES line; each is a GitHub file pinned to a 40-digit commit."""
    assert set(SOURCES) == set(REAL)
    for name, (url, what) in SOURCES.items():
        assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+/blob/[0-9a-f]{40}/\S+", url), name
        assert what, name


# Gemma 3 text configs in the pre-5.x form (a flat rope_scaling for the global layers, rope_local_base_freq for
# the sliding ones), as config.json files of the 4B, 12B and 27B models give them (linear x 8), a 1B-like one
# (rope_scaling null), one that leaves the bases out (the class defaults), a yarn entry, and the new nested form
GEMMA3_OLD = {
    "linear x 8 (4B/12B/27B form)": {"rope_scaling": {"factor": 8.0, "rope_type": "linear"},
                                     "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0},
    "rope_scaling null (1B form)": {"rope_scaling": None, "rope_theta": 1000000, "rope_local_base_freq": 10000},
    "bases left out": {"rope_scaling": {"factor": 4.0, "type": "linear"}},
    "yarn, other bases": {"rope_scaling": {"factor": 2.0, "rope_type": "yarn",
                                           "original_max_position_embeddings": 4096},
                          "rope_theta": 500000.0, "rope_local_base_freq": 20000.0},
    "nested with rope_scaling too": {"rope_parameters": {"full_attention": {"rope_type": "default",
                                                                            "rope_theta": 3e5},
                                                         "sliding_attention": {"rope_type": "default"}},
                                     "rope_scaling": {"factor": 2.0, "rope_type": "linear"},
                                     "rope_local_base_freq": 5000.0},
}


@pytest.mark.parametrize("multimodal", [False, True], ids=["gemma3_text", "gemma3 text_config"])
@pytest.mark.parametrize("name", list(GEMMA3_OLD))
def test_gemma3_flat_rope_scaling_as_transformers_loads_it(name, multimodal, tmp_path):
    """``config_rope_frequencies`` on a Gemma 3 ``config.json`` written to disk and loaded with
    ``AutoConfig.from_pretrained`` (so ``Gemma3TextConfig.convert_rope_params_to_dict`` runs on the file as it
    is): per layer type, ``Gemma3RotaryEmbedding``'s ``{layer_type}_inv_freq`` and attention scaling."""
    import json

    from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding

    text = {"model_type": "gemma3_text", "head_dim": 256, "hidden_size": 2560, "num_attention_heads": 8,
            "num_key_value_heads": 4, "num_hidden_layers": 12, "sliding_window_pattern": 6,
            "max_position_embeddings": 131072, **copy.deepcopy(GEMMA3_OLD[name])}
    file = {"model_type": "gemma3", "text_config": text} if multimodal else text
    (tmp_path / "config.json").write_text(json.dumps(file))
    config = AutoConfig.from_pretrained(tmp_path)
    config = config.text_config if multimodal else config
    rotary = Gemma3RotaryEmbedding(config)
    for layer_type in ("full_attention", "sliding_attention"):
        theirs = getattr(rotary, f"{layer_type}_inv_freq").double().numpy()
        ours, factor = pe_lib.config_rope_frequencies(file, layer_type=layer_type)
        record(f"real configs: Gemma 3 pre-5.x rope_scaling, {layer_type}: inv_freq",
               float(np.max(np.abs(ours - theirs) / ours)), FREQ_RTOL, "max |Δω'_i|/ω'_i")
        record(f"real configs: Gemma 3 pre-5.x rope_scaling, {layer_type}: attention_factor",
               abs(factor - getattr(rotary, f"{layer_type}_attention_scaling")), 1e-12, "|Δ|")
    with pytest.raises(ValueError, match="one rope dict per layer type"):
        pe_lib.config_rope_frequencies(file)  # the layers differ: which one must be said
