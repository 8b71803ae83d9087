"""rope_scaling in the words of vLLM and llama.cpp: flags per type, the cases without one, the linear check."""

import json

import numpy as np
import pytest

import pe_lib

QWEN_YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
LLAMA31 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
           "original_max_position_embeddings": 8192}


def test_llama_cpp_linear_is_transformers_linear():
    for s in (2.0, 4.0, 8.0):
        ours = pe_lib.llama_cpp_frequencies(128, freq_base=500_000.0, freq_scale=1 / s)
        theirs, factor = pe_lib.rope_scaling_frequencies(128, {"rope_type": "linear", "factor": s}, base=500_000.0)
        np.testing.assert_allclose(ours, theirs, rtol=1e-15)
        assert factor == 1.0
    # by hand: d = 4, base 100: 1 and 1/10, times the scale
    np.testing.assert_allclose(pe_lib.llama_cpp_frequencies(4, freq_base=100.0, freq_scale=0.5), [0.5, 0.05])


def test_default_and_linear():
    got = pe_lib.serving_settings(None, head_dim=128, base=1e6, max_position_embeddings=32768)
    assert got == {"context": 32768, "vllm": [], "missing": [],
                   "llama.cpp": ["--rope-scaling", "none", "--rope-freq-base", "1000000", "-c", "32768"]}
    got = pe_lib.serving_settings({"type": "linear", "factor": 2.0}, head_dim=64, max_position_embeddings=4096)
    assert got["context"] == 8192 and got["missing"] == []
    assert got["llama.cpp"] == ["--rope-scaling", "linear", "--rope-scale", "2", "--rope-freq-base", "10000",
                                "-c", "8192"]
    flag, overrides, *rest = got["vllm"]
    assert flag == "--hf-overrides" and rest == []  # vLLM derives 4096 x 2 itself
    assert json.loads(overrides) == {"rope_parameters": {"rope_type": "linear", "factor": 2.0, "rope_theta": 10000.0}}


def test_yarn_keeps_its_original_length_and_names_what_llama_cpp_cannot_take():
    got = pe_lib.serving_settings(QWEN_YARN, head_dim=128, base=1e6, max_position_embeddings=32768)
    assert got["context"] == 131072 and got["missing"] == []
    assert got["llama.cpp"] == ["--rope-scaling", "yarn", "--rope-scale", "4", "--rope-freq-base", "1000000",
                                "--yarn-orig-ctx", "32768", "-c", "131072"]
    deepseek = QWEN_YARN | {"mscale": 1.0, "mscale_all_dim": 1.0, "beta_fast": 32, "beta_slow": 1}
    got = pe_lib.serving_settings(deepseek, head_dim=64, max_position_embeddings=131072)
    assert got["llama.cpp"][-6:] == ["--yarn-beta-fast", "32", "--yarn-beta-slow", "1", "-c", "131072"]
    assert len(got["missing"]) == 1 and "no flag for mscale, mscale_all_dim" in got["missing"][0]


def test_dynamic_is_static_in_both_engines():
    got = pe_lib.serving_settings({"rope_type": "dynamic", "factor": 2.0}, head_dim=4, base=100.0,
                                  max_position_embeddings=1000)
    # the base 'dynamic' reaches at twice the length: 100 * (2 * 2 - 1) ** (4 / 2) = 900
    assert got["llama.cpp"] == ["--rope-scaling", "none", "--rope-freq-base", "900", "-c", "2000"]
    assert len(got["missing"]) == 2 and got["missing"][1].startswith("vLLM")
    assert "PR 41277" in got["missing"][1] and "plain RoPE" in got["missing"][1]
    # vLLM is asked for the same fixed base, over the longer context, with no 'dynamic' left to misread
    assert json.loads(got["vllm"][1]) == {"max_position_embeddings": 2000,
                                          "rope_parameters": {"rope_type": "default", "rope_theta": 900.0}}
    assert len(got["vllm"]) == 2


def test_vllm_dynamic_before_and_after_its_fix():
    # by hand, d = 4, base 100, L = 1000, s = 2: before, 100 * (2 * 2000 / 1000 - 1) ** 2 = 900; after, 100 * 1 = 100
    omega, table = pe_lib.vllm_dynamic_frequencies(4, 2.0, base=100.0, max_position_embeddings=1000, before_fix=True)
    np.testing.assert_allclose(omega, [1.0, 1 / 30], rtol=1e-14)
    assert table == 2000
    omega, table = pe_lib.vllm_dynamic_frequencies(4, 2.0, base=100.0, max_position_embeddings=1000)
    np.testing.assert_allclose(omega, [1.0, 0.1], rtol=1e-14)
    assert table == 2000
    # before: transformers' "dynamic" at s L; after: plain RoPE (both from another module of pe_lib)
    for s in (1.5, 2.0, 4.0):
        before, _ = pe_lib.vllm_dynamic_frequencies(64, s, max_position_embeddings=512, before_fix=True)
        theirs, _ = pe_lib.rope_scaling_frequencies(64, {"rope_type": "dynamic", "factor": s},
                                                    max_position_embeddings=512, seq_len=int(512 * s))
        np.testing.assert_allclose(before, theirs, rtol=1e-12)
        after, _ = pe_lib.vllm_dynamic_frequencies(64, s, max_position_embeddings=512)
        plain, _ = pe_lib.rope_scaling_frequencies(64, None)
        np.testing.assert_allclose(after, plain, rtol=1e-12)
    assert set(pe_lib.VLLM_DYNAMIC_COMMITS) == {"before PR 41277", "after PR 41277"}


def test_vllm_derives_the_longest_length():
    assert pe_lib.vllm_max_model_len(None, max_position_embeddings=4096) == 4096
    assert pe_lib.vllm_max_model_len({"type": "linear", "factor": 4.0}, max_position_embeddings=4096) == 16384
    assert pe_lib.vllm_max_model_len({"rope_type": "dynamic", "factor": 2.0}, max_position_embeddings=4096) == 8192
    assert pe_lib.vllm_max_model_len(QWEN_YARN, max_position_embeddings=4096) == 131072  # from the original length
    assert pe_lib.vllm_max_model_len(LLAMA31, max_position_embeddings=131072) == 131072  # factor not applied
    longrope = {"rope_type": "longrope", "short_factor": [1.0] * 4, "long_factor": [2.0] * 4,
                "original_max_position_embeddings": 4096}
    assert pe_lib.vllm_max_model_len(longrope, max_position_embeddings=131072) == 4096
    no_original = {k: v for k, v in longrope.items() if k != "original_max_position_embeddings"}
    assert pe_lib.vllm_max_model_len(no_original, max_position_embeddings=131072) == 131072
    # longrope: vLLM would serve only the short 4096, so the long context needs --max-model-len
    got = pe_lib.serving_settings(longrope, head_dim=8, max_position_embeddings=131072)
    assert got["context"] == 131072 and got["vllm"][-2:] == ["--max-model-len", "131072"]


def test_llama3_has_no_llama_cpp_flag():
    got = pe_lib.serving_settings(LLAMA31, head_dim=128, base=500_000.0, max_position_embeddings=131072)
    assert got["context"] == 131072  # factor 8, but 16 times the original length
    assert got["llama.cpp"] == ["-c", "131072"] and "GGUF" in got["missing"][0]
    assert pe_lib.serving_settings(LLAMA31, head_dim=128)["context"] is None


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: pe_lib.serving_settings({"rope_type": "magic"}, head_dim=64), ValueError, "rope_type must be one of"),
        (lambda: pe_lib.serving_settings({"rope_type": "linear"}, head_dim=64), ValueError, "needs the keys"),
        (lambda: pe_lib.serving_settings([("rope_type", "linear")], head_dim=64), TypeError, "must be None or a dict"),
        (lambda: pe_lib.serving_settings(None, head_dim=0), ValueError, "head_dim must be an integer >= 1"),
        (lambda: pe_lib.serving_settings(None, head_dim=8, base=0.5), ValueError, "greater than 1"),
        (lambda: pe_lib.serving_settings(QWEN_YARN | {"beta_fast": "x"}, head_dim=8), ValueError, "finite real"),
        (lambda: pe_lib.llama_cpp_frequencies(8, freq_scale=2.0), ValueError, r"in \(0, 1\], got 2.0"),
        (lambda: pe_lib.llama_cpp_frequencies(7), ValueError, "even integer"),
        (lambda: pe_lib.vllm_dynamic_frequencies(2, 2.0, max_position_embeddings=8), ValueError, "at least 4"),
        (lambda: pe_lib.vllm_dynamic_frequencies(8, 0.5, max_position_embeddings=8), ValueError, "factor must be >= 1"),
        (lambda: pe_lib.vllm_dynamic_frequencies(8, 2.0, max_position_embeddings=0), ValueError, "integer >= 1"),
        (lambda: pe_lib.vllm_dynamic_frequencies(8, 2.0, max_position_embeddings=8, before_fix=1), ValueError,
         "before_fix must be True"),
        (lambda: pe_lib.vllm_max_model_len([("rope_type", "linear")], max_position_embeddings=8), TypeError,
         "must be None or a dict"),
        (lambda: pe_lib.vllm_max_model_len(None, max_position_embeddings=-1), ValueError, "integer >= 1"),
    ],
)
def test_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ---- found by `make mutate` (each kills mutants that the tests above let live) ---------------------
def test_a_fractional_factor_and_the_dicts_rope_theta_reach_the_flags():
    out = pe_lib.serving_settings({"rope_type": "linear", "factor": 2.5, "rope_theta": 1e6}, head_dim=64,
                                  max_position_embeddings=4096)
    assert out["llama.cpp"] == ["--rope-scaling", "linear", "--rope-scale", "2.5", "--rope-freq-base", "1000000",
                                "-c", "10240"]  # 4096 * 2.5


def test_the_base_argument_is_checked_against_the_dict_and_the_type_is_named():
    with pytest.raises(ValueError, match=r"rope_scaling\['rope_theta'\] = 1000000.0 disagrees with base=500000.0"):
        pe_lib.serving_settings({"rope_type": "linear", "factor": 2.0, "rope_theta": 1e6}, head_dim=64, base=5e5)
    with pytest.raises(TypeError, match=r"^rope_scaling must be None or a dict like .*, got list$"):
        pe_lib.serving_settings([("rope_type", "linear")], head_dim=64)


LLAMA_CPP_NO_FACTORS = ("llama.cpp: no flag for {!r}; its per-pair factors must be in the GGUF file (written by "
                        "convert_hf_to_gguf.py from config.json)")


def test_whole_settings_by_hand_for_each_type():
    import warnings
    # linear, no max_position_embeddings: the context is unknown, so no -c and no --max-model-len
    assert pe_lib.serving_settings({"rope_type": "linear", "factor": 2.0, "rope_theta": 1_000_000}, head_dim=64) == {
        "context": None, "missing": [],
        "vllm": ["--hf-overrides", '{"rope_parameters": {"factor": 2.0, "rope_theta": 1000000.0, "rope_type": '
                                   '"linear"}}'],
        "llama.cpp": ["--rope-scaling", "linear", "--rope-scale", "2", "--rope-freq-base", "1000000"]}
    # longrope: the context is max_position_embeddings, not original * factor (16 * 4096 = 65536)
    longrope = {"rope_type": "longrope", "short_factor": [1.0] * 32, "long_factor": [2.0] * 32, "factor": 16.0,
                "original_max_position_embeddings": 4096}
    out = pe_lib.serving_settings(longrope, head_dim=64, max_position_embeddings=131_072)
    assert out["context"] == 131_072 and out["llama.cpp"] == ["-c", "131072"]
    assert out["missing"] == [LLAMA_CPP_NO_FACTORS.format("longrope")]
    # proportional (Gemma 4): factor 1 when absent, context = max_position_embeddings * 1
    out = pe_lib.serving_settings({"rope_type": "proportional", "partial_rotary_factor": 0.5}, head_dim=64,
                                  max_position_embeddings=4096)
    assert out["context"] == 4096 and out["missing"] == [LLAMA_CPP_NO_FACTORS.format("proportional")]
    # yarn: what llama.cpp has no flag for is named
    yarn = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096, "attention_factor": 1.2,
            "truncate": False}
    assert pe_lib.serving_settings(yarn, head_dim=64, max_position_embeddings=16_384)["missing"] == [
        "llama.cpp: no flag for attention_factor, truncate (its attention factor is 1 + 0.1 ln s, times "
        "--yarn-attn-factor; the rest comes from the GGUF file)"]
    # dynamic over a rotary dimension of 32 (partial_rotary_factor 0.5): base (s^2 - (s - 1))^(d/(d - 2))
    static = 10_000.0 * (2.0 * 2.0 - 1.0) ** (32 / 30)  # 32279.7
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 'dynamic' does not use original_max_position_embeddings: transformers warns
        out = pe_lib.serving_settings({"rope_type": "dynamic", "factor": 2.0, "partial_rotary_factor": 0.5,
                                       "original_max_position_embeddings": 1000}, head_dim=64,
                                      max_position_embeddings=4096)
    assert 32_279 < static < 32_280
    assert out["context"] == 8192  # against max_position_embeddings, not the dict's 1000
    assert out["llama.cpp"] == ["--rope-scaling", "none", "--rope-freq-base", f"{round(static, 1)!r}", "-c", "8192"]
    assert out["missing"] == [
        "llama.cpp: no length-dependent scaling; the closest is a fixed --rope-freq-base, the base 'dynamic' reaches "
        "at the longest length, used for every input",
        "vLLM: no length-dependent scaling either; its own 'dynamic' builds one table, since PR 41277 (commit "
        "3cfbaf33) with the base unscaled, i.e. plain RoPE past the training length (before it, commit 50feac95: "
        "the fixed base above); the override asks for that fixed base on any version"]
    assert out["vllm"] == ["--hf-overrides", '{"max_position_embeddings": 8192, "rope_parameters": {"rope_theta": '
                                             f'{round(static, 1)!r}, "rope_type": "default"}}}}']
    # default with a factor it does not use (transformers warns): the context stays max_position_embeddings
    with pytest.warns(pe_lib.RopeScalingWarning):
        out = pe_lib.serving_settings({"rope_type": "default", "factor": 2.0}, head_dim=64,
                                      max_position_embeddings=4096)
    assert out["context"] == 4096


def test_llama_cpp_defaults_and_errors_name_the_argument():
    # defaults: --rope-freq-base 10000, --rope-freq-scale 1: d = 4 gives (1, 10000^(-1/2)) = (1, 0.01)
    np.testing.assert_allclose(pe_lib.llama_cpp_frequencies(4), [1.0, 0.01], rtol=1e-14)
    for kwargs, match in [({"head_dim": 7}, r"^head_dim must be a positive even integer"),
                          ({"freq_scale": float("nan")}, r"^freq_scale must be a finite real number"),
                          ({"freq_scale": 0.0}, r"^freq_scale is 1/\(context growth\) and must be in \(0, 1\]"),
                          ({"freq_base": 0.5}, r"^freq_base must be a finite number greater than 1")]:
        with pytest.raises(ValueError, match=match):
            pe_lib.llama_cpp_frequencies(**{"head_dim": 4, **kwargs})


def test_vllm_serves_longrope_at_its_original_length_whatever_its_factor():
    # longrope's factor is not applied (short inputs keep the short factors): 4096, not 32 x 4096 (planted: the
    # factor applied to longrope's original length)
    longrope = {"rope_type": "longrope", "short_factor": [1.0] * 4, "long_factor": [2.0] * 4, "factor": 32.0,
                "original_max_position_embeddings": 4096}
    assert pe_lib.vllm_max_model_len(longrope, max_position_embeddings=131072) == 4096
