r"""``pe_lib.rope_scaling_frequencies`` against transformers' own RoPE parameter functions (all seven types).

The reference calls go through a real config class, as a model would: ``LlamaConfig`` (which
standardizes ``rope_parameters``, e.g. fills ``original_max_position_embeddings``) and then
``ROPE_INIT_FUNCTIONS[rope_type](config, seq_len=...)``; ``"default"`` is not in that table in
transformers 5, each model class computes it: ``PhiRotaryEmbedding.compute_default_rope_parameters``
(which, unlike Llama's, honours ``partial_rotary_factor``).

Tolerance. transformers computes ``inv_freq`` in float32, pe_lib in float64. Each frequency is a
float32 power and a division or two, so we ask every frequency to agree to 8 float32 epsilons
relative to itself (8 * 2**-23 = 9.5e-7), not only relative to the largest one: the slowest pairs
are checked as strictly as the fastest. The exception is a pair on the ramp of ``"yarn"`` or
``"llama3"``, the blend :math:`(1-\gamma_i)\,\omega_i/s + \gamma_i\,\omega_i`: transformers rounds
:math:`\gamma_i` and both terms to float32, and the error of the larger term, :math:`\omega_i`,
reaches the blend whole; a blend close to :math:`\omega_i/s` therefore differs by up to about
:math:`s` times its own float32 precision. Those pairs are checked relative to :math:`\omega_i`,
with the same 8 epsilons, and reported apart. ``attention_factor`` is a Python float in both: 1e-12.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import EPS32, record, relative_each
from transformers import LlamaConfig, PhiConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.phi.modeling_phi import PhiRotaryEmbedding

import pe_lib

FREQ_RTOL = 8 * EPS32
FACTOR_TOL = 1e-12
HEADS = 4  # hidden_size = HEADS * head_dim; transformers reads head_dim directly when the config has it


def reference(head_dim, rope_scaling, *, base, max_position_embeddings=4096, seq_len=None, partial=1.0):
    """transformers' ``(inv_freq, attention_factor)`` for this config, as float64 and float."""
    params = dict(rope_scaling or {"rope_type": "default"})
    params["rope_theta"] = base
    if partial != 1.0:
        params["partial_rotary_factor"] = partial
    if params["rope_type"] == "default":
        config = PhiConfig(hidden_size=HEADS * head_dim, num_attention_heads=HEADS, partial_rotary_factor=partial,
                           max_position_embeddings=max_position_embeddings, rope_parameters=params)
        inv_freq, factor = PhiRotaryEmbedding.compute_default_rope_parameters(config)
    else:
        config = LlamaConfig(hidden_size=HEADS * head_dim, num_attention_heads=HEADS, head_dim=head_dim,
                             max_position_embeddings=max_position_embeddings, rope_parameters=params)
        inv_freq, factor = ROPE_INIT_FUNCTIONS[params["rope_type"]](config, "cpu", seq_len=seq_len)
    assert inv_freq.dtype.is_floating_point and inv_freq.dtype.itemsize == 4  # float32, as the tolerance assumes
    return inv_freq.double().numpy(), float(factor)


def compare(name, head_dim, rope_scaling, *, base, max_position_embeddings=4096, seq_len=None, partial=1.0):
    theirs, their_factor = reference(head_dim, rope_scaling, base=base, max_position_embeddings=max_position_embeddings,
                                     seq_len=seq_len, partial=partial)
    ours, our_factor = pe_lib.rope_scaling_frequencies(
        head_dim, rope_scaling, base=base, max_position_embeddings=max_position_embeddings, seq_len=seq_len,
        partial_rotary_factor=partial)
    ramp = _ramp_pairs(ours, head_dim, rope_scaling, base=base, partial=partial)
    record(f"{name}: inv_freq", relative_each(ours[~ramp], theirs[~ramp]), FREQ_RTOL, "max |Δω'_i|/ω'_i")
    if ramp.any():
        omega = pe_lib.frequencies(ours.size * 2, base=base)[ramp]
        record(f"{name}: inv_freq, ramp pairs", float(np.max(np.abs(ours[ramp] - theirs[ramp]) / omega)),
               FREQ_RTOL, "max |Δω'_i|/ω_i")
    record(f"{name}: attention_factor", abs(our_factor - their_factor), FACTOR_TOL, "|Δ|")
    return ours, theirs


def _ramp_pairs(ours, head_dim, rope_scaling, *, base, partial):
    """The pairs that ``"yarn"`` or ``"llama3"`` blend: neither kept (ω_i) nor divided by the factor (ω_i/s)."""
    if not rope_scaling or rope_scaling["rope_type"] not in ("yarn", "llama3"):
        return np.zeros(ours.size, dtype=bool)
    omega = pe_lib.frequencies(int(head_dim * partial), base=base)  # ω_i, shape (d/2,)
    s = rope_scaling["factor"]
    return ~np.isclose(ours, omega, rtol=1e-12, atol=0) & ~np.isclose(ours, omega / s, rtol=1e-12, atol=0)


# ---- default and linear ---------------------------------------------------------------------------

@pytest.mark.parametrize("base", [10_000.0, 500_000.0, 1_000_000.0, 10_000_000.0])
@pytest.mark.parametrize("head_dim", [64, 80, 96, 128, 256])
def test_default(head_dim, base):
    compare("default", head_dim, None, base=base)


@pytest.mark.parametrize("factor", [1.0, 2.0, 4.5, 8.0, 40])
@pytest.mark.parametrize("head_dim, base", [(64, 10_000.0), (128, 500_000.0), (96, 1_000_000.0)])
def test_linear(head_dim, base, factor):
    compare("linear", head_dim, {"rope_type": "linear", "factor": factor}, base=base)


# ---- dynamic: below, at and above max_position_embeddings --------------------------------------------

@pytest.mark.parametrize("seq_len", [None, 1, 2047, 2048, 2049, 4096, 5000, 16_384, 100_000])
@pytest.mark.parametrize("factor", [1.0, 2.0, 8.0])
@pytest.mark.parametrize("head_dim, base", [(64, 10_000.0), (128, 500_000.0), (80, 1_000_000.0)])
def test_dynamic(head_dim, base, factor, seq_len):
    ours, _ = compare("dynamic", head_dim, {"rope_type": "dynamic", "factor": factor}, base=base,
                      max_position_embeddings=2048, seq_len=seq_len)
    default, _ = pe_lib.rope_scaling_frequencies(head_dim, base=base)
    if seq_len is None or seq_len <= 2048:
        np.testing.assert_array_equal(ours, default)  # below the trained length: the default frequencies


# ---- yarn -----------------------------------------------------------------------------------------

YARN = [
    {"factor": 4.0, "original_max_position_embeddings": 32_768},  # Qwen's suggested entry
    {"factor": 4.0, "original_max_position_embeddings": 32_768, "beta_fast": 32.0, "beta_slow": 1.0},
    {"factor": 8.0, "original_max_position_embeddings": 4096, "beta_fast": 64, "beta_slow": 2},
    {"factor": 16.0, "original_max_position_embeddings": 2048, "beta_fast": 16.0, "beta_slow": 0.5},
    {"factor": 32.0, "original_max_position_embeddings": 4096, "beta_fast": 32.0, "beta_slow": 1.0,
     "truncate": False},  # gpt-oss
    {"factor": 32.0, "original_max_position_embeddings": 4096, "truncate": True},
    {"factor": 40.0, "original_max_position_embeddings": 4096, "beta_fast": 32, "beta_slow": 1,
     "mscale": 1.0, "mscale_all_dim": 1.0},  # DeepSeek-V3
    {"factor": 40.0, "original_max_position_embeddings": 4096, "mscale": 0.707, "mscale_all_dim": 0.707},  # V2
    {"factor": 40.0, "original_max_position_embeddings": 4096, "mscale": 1.0, "mscale_all_dim": 0.5},
    {"factor": 40.0, "original_max_position_embeddings": 4096, "mscale": 1.0},  # mscale alone: ignored
    {"factor": 32.0, "original_max_position_embeddings": 4096, "beta_fast": 1.0, "beta_slow": 1.0},  # Kimi K2
    {"factor": 4.0, "original_max_position_embeddings": 8192, "attention_factor": 0.8},
    {"factor": 4.0, "original_max_position_embeddings": 8192, "attention_factor": 1.25, "truncate": False},
    {"factor": 4.0, "original_max_position_embeddings": 8192, "beta_fast": None, "beta_slow": 0},  # -> 32, 1
    {"factor": 1.0, "original_max_position_embeddings": 4096},
    {"factor": 2.5},  # no original length: the config's max_position_embeddings
]


@pytest.mark.parametrize("keys", YARN, ids=[f"yarn{i}" for i in range(len(YARN))])
@pytest.mark.parametrize("head_dim, base", [(64, 150_000.0), (128, 1_000_000.0), (64, 10_000.0), (96, 50_000.0)])
def test_yarn(head_dim, base, keys):
    compare("yarn", head_dim, {"rope_type": "yarn", **keys}, base=base, max_position_embeddings=131_072)


# ---- longrope: short and long factors, both sides of the original length -------------------------------

def _factors(seed, half, top):
    rng = np.random.default_rng(seed)
    return sorted(float(v) for v in rng.uniform(1.0, top, size=half))  # a rising list, like Phi-3's


@pytest.mark.parametrize("seq_len", [None, 1, 4095, 4096, 4097, 131_072])
@pytest.mark.parametrize("extra", [{}, {"factor": 32.0}, {"attention_factor": 1.1}, {"factor": 1.0}],
                         ids=["factor_from_lengths", "factor", "attention_factor", "factor1"])
@pytest.mark.parametrize("head_dim", [96, 128])
def test_longrope(head_dim, extra, seq_len):
    half = head_dim // 2
    keys = {"rope_type": "longrope", "short_factor": _factors(1, half, 3.0), "long_factor": _factors(2, half, 60.0),
            "original_max_position_embeddings": 4096, **extra}
    ours, _ = compare("longrope", head_dim, keys, base=10_000.0, max_position_embeddings=131_072, seq_len=seq_len)
    chosen = keys["long_factor"] if seq_len is not None and seq_len > 4096 else keys["short_factor"]
    np.testing.assert_allclose(ours, pe_lib.frequencies(head_dim) / np.array(chosen), rtol=1e-14)


# ---- llama3 ---------------------------------------------------------------------------------------

LLAMA3 = [
    ({"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
     128, 500_000.0),  # Llama 3.1
    ({"factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
     64, 500_000.0),  # Llama 3.2 1B/3B
    ({"factor": 4.0, "low_freq_factor": 2.0, "high_freq_factor": 8.0, "original_max_position_embeddings": 4096},
     128, 10_000.0),
    ({"factor": 2.0, "low_freq_factor": 0.5, "high_freq_factor": 1.5, "original_max_position_embeddings": 2048},
     96, 1_000_000.0),
]


@pytest.mark.parametrize("keys, head_dim, base", LLAMA3, ids=[f"llama3_{i}" for i in range(len(LLAMA3))])
def test_llama3(keys, head_dim, base):
    compare("llama3", head_dim, {"rope_type": "llama3", **keys}, base=base, max_position_embeddings=131_072)


# ---- partial_rotary_factor, with every type --------------------------------------------------------

PARTIAL_TYPES = [
    None,
    {"rope_type": "linear", "factor": 4.0},
    {"rope_type": "dynamic", "factor": 2.0},
    {"rope_type": "yarn", "factor": 16.0, "original_max_position_embeddings": 4096},
    {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
     "original_max_position_embeddings": 8192},
]


@pytest.mark.parametrize("head_dim, partial", [(80, 0.4), (128, 0.5), (64, 0.25), (96, 0.75), (256, 0.25)])
@pytest.mark.parametrize("rope_scaling", PARTIAL_TYPES, ids=["default", "linear", "dynamic", "yarn", "llama3"])
def test_partial_rotary_factor(rope_scaling, head_dim, partial):
    ours, _ = compare("partial_rotary_factor", head_dim, rope_scaling, base=10_000.0, max_position_embeddings=8192,
                      seq_len=20_000, partial=partial)
    assert ours.size == int(head_dim * partial) // 2


def test_longrope_partial_rotary_factor():
    head_dim, partial = 128, 0.5  # 32 pairs rotated
    keys = {"rope_type": "longrope", "short_factor": _factors(3, 32, 2.0), "long_factor": _factors(4, 32, 30.0),
            "original_max_position_embeddings": 4096}
    for seq_len in (4096, 4097):
        compare("partial_rotary_factor", head_dim, keys, base=10_000.0, max_position_embeddings=131_072,
                seq_len=seq_len, partial=partial)


# ---- what a model runs: the rotary module, its forward pass and its length-dependent update ------------

@pytest.mark.parametrize("length", [100, 2048, 2049, 6000])
def test_dynamic_module_follows_the_sequence_length(length):
    """``LlamaRotaryEmbedding`` recomputes ``"dynamic"`` frequencies from ``max(position_ids) + 1``."""
    import torch
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    head_dim, base = 64, 10_000.0
    config = LlamaConfig(hidden_size=HEADS * head_dim, num_attention_heads=HEADS, head_dim=head_dim,
                         max_position_embeddings=2048,
                         rope_parameters={"rope_type": "dynamic", "factor": 4.0, "rope_theta": base})
    module = LlamaRotaryEmbedding(config)
    positions = torch.arange(length)[None, :]
    cos, sin = module(torch.zeros(1, length, head_dim), positions)
    ours, _ = pe_lib.rope_scaling_frequencies(head_dim, {"rope_type": "dynamic", "factor": 4.0}, base=base,
                                              max_position_embeddings=2048, seq_len=length)
    record("dynamic module: inv_freq after forward", relative_each(ours, module.inv_freq.double().numpy()),
           FREQ_RTOL, "max |Δω'_i|/ω'_i")
    angle = np.arange(length)[:, None] * ours  # theta[pos, i] = pos * omega'_i, the split layout's first half
    # cos/sin of float32 angles up to ~6000 rad: float32 rounding of the angle, |Δθ| <= 2 eps32 |θ|
    tolerance = 4 * EPS32 * (1.0 + np.max(angle))
    diff = max(np.max(np.abs(np.cos(angle) - cos[0, :, : head_dim // 2].double().numpy())),
               np.max(np.abs(np.sin(angle) - sin[0, :, head_dim // 2 :].double().numpy())))
    record("dynamic module: cos and sin", diff, tolerance, "max |Δ|, bound 4 eps32 (1 + max θ)")


@pytest.mark.parametrize("length", [4096, 4097])
def test_longrope_module_switches_after_the_original_length(length):
    """``Phi3RotaryEmbedding`` uses ``long_factor`` once ``max(position_ids) + 1`` exceeds the original length."""
    import torch
    from transformers import Phi3Config
    from transformers.models.phi3.modeling_phi3 import Phi3RotaryEmbedding

    head_dim, half = 96, 48
    keys = {"rope_type": "longrope", "short_factor": _factors(5, half, 2.0), "long_factor": _factors(6, half, 40.0)}
    config = Phi3Config(hidden_size=HEADS * head_dim, num_attention_heads=HEADS, max_position_embeddings=131_072,
                        original_max_position_embeddings=4096, rope_parameters={**keys, "rope_theta": 10_000.0})
    module = Phi3RotaryEmbedding(config)
    module(torch.zeros(1, 1, head_dim), torch.arange(length)[None, :])
    ours, factor = pe_lib.rope_scaling_frequencies(
        head_dim, {**keys, "original_max_position_embeddings": 4096}, max_position_embeddings=131_072, seq_len=length)
    record("longrope module: inv_freq after forward", relative_each(ours, module.inv_freq.double().numpy()),
           FREQ_RTOL, "max |Δω'_i|/ω'_i")
    record("longrope module: attention_factor", abs(factor - module.attention_scaling), FACTOR_TOL, "|Δ|")


# ---- proportional (Gemma 4's full-attention layers): the whole head's frequencies, a fraction of them turning ----

@pytest.mark.parametrize("factor", [None, 1.0, 8.0])
@pytest.mark.parametrize("head_dim, partial, base", [(512, 0.25, 1_000_000.0), (256, 0.5, 10_000.0),
                                                     (128, 1.0, 500_000.0), (96, 0.3, 10_000.0)])
def test_proportional(head_dim, partial, base, factor):
    params = {"rope_type": "proportional", "partial_rotary_factor": partial, "rope_theta": base}
    if factor is not None:
        params["factor"] = factor
    config = LlamaConfig(hidden_size=HEADS * head_dim, num_attention_heads=HEADS, head_dim=head_dim,
                         max_position_embeddings=4096, rope_parameters=dict(params))
    inv_freq, their_factor = ROPE_INIT_FUNCTIONS["proportional"](config, "cpu")
    theirs = inv_freq.double().numpy()
    ours, our_factor = pe_lib.rope_scaling_frequencies(head_dim, params)
    turning = ours != 0
    np.testing.assert_array_equal(turning, theirs != 0)  # the same pairs stand still (frequency 0)
    record("proportional: inv_freq", relative_each(ours[turning], theirs[turning]), FREQ_RTOL, "max |Δω'_i|/ω'_i")
    record("proportional: attention_factor", abs(our_factor - their_factor), FACTOR_TOL, "|Δ|")
