"""pe_lib.trained.text_interventions: each intervention checked against an independent way of getting the
same numbers (a shorter window, a model whose untrained buckets are overwritten by hand), the per-character
bits against task_loss, and bad input refused by name."""

import dataclasses
import pathlib

import numpy as np
import pytest

import pe_lib
from pe_lib.trained import text_interventions as ti

L0 = 16  # training length of the test models
TINY = dict(seq_len=L0, steps=20, d_model=16, n_layers=1, n_heads=2, batch_size=8, progress=False)
TEXT = pe_lib.corpus_split("kjv")[1][:2000]  # held-out text, enough for windows of 64


@pytest.fixture(scope="module")
def models():
    return {enc: pe_lib.train_transformer("text", enc, **TINY) for enc in ("none", "rope", "alibi", "t5", "learned")}


def with_random_t5_bias(model, seed=0):
    """The model with every bucket's bias drawn at random (scale 2), the untrained buckets included, so that
    which bucket a key falls in changes the scores."""
    params = dict(model.params)
    params["rel_bias"] = (2 * np.random.default_rng(seed).standard_normal(params["rel_bias"].shape)).astype(np.float32)
    return dataclasses.replace(model, params=params)


@pytest.mark.parametrize("encoding", ["none", "rope", "t5"])
def test_bits_average_to_task_loss(models, encoding):
    for n in (8, L0, 4 * L0):
        bits = ti.window_bits(models[encoding], n, text=TEXT)
        assert bits.shape == (1999 // n, n)
        assert bits.mean() == pytest.approx(pe_lib.task_loss(models[encoding], n, text=TEXT), abs=1e-9)


def test_clamped_buckets_by_hand():
    b = ti.clamped_t5_buckets(512, 64)
    # causal: distance d = i - j; exact buckets below 16, then 16 + floor(16 log(d/16) / log(128/16)):
    # d = 63 -> 16 + floor(10.55) = 26, the largest bucket windows of 64 reach; every key further back gets it
    assert b[500, 0] == 26 and b[100, 36] == 26 and b[100, 37] == 26
    assert b[500, 490] == 10 and b[7, 7] == 0 and b[3, 400] == 0  # near keys as before; later keys: bucket 0
    assert b.max() == 26 and b.dtype == np.int32
    # bidirectional: 16 buckets a side, exact below 8: |63| -> 8 + floor(8 log(63/8) / log(16)) = 13, +16 after
    two = ti.clamped_t5_buckets(300, 64, causal=False)
    assert two[200, 0] == 13 and two[0, 200] == 29 and two[5, 9] == 16 + 4


def test_clamp_is_the_last_trained_bucket_copied_into_the_untrained_ones(models):
    model = with_random_t5_bias(models["t5"])
    clamped = ti.window_bits(model, 4 * L0, intervention="clamp buckets", text=TEXT)
    # the same model with buckets 16..31 holding bucket 15's bias (distance L0 - 1 = 15 is bucket 15, exact)
    params = dict(model.params)
    params["rel_bias"] = params["rel_bias"].copy()
    params["rel_bias"][16:] = params["rel_bias"][15]
    by_hand = ti.window_bits(dataclasses.replace(model, params=params), 4 * L0, text=TEXT)
    np.testing.assert_array_equal(clamped, by_hand)
    plain = ti.window_bits(model, 4 * L0, text=TEXT)
    assert np.abs(plain - clamped).max() > 0.01  # the untrained buckets did matter: the check is not empty
    np.testing.assert_array_equal(plain[:, :L0], clamped[:, :L0])  # no key is further back than L0 - 1 yet


@pytest.mark.parametrize("encoding", ["none", "rope", "alibi", "t5"])
def test_hidden_keys_leave_the_window_training_showed(models, encoding):
    # one layer, a relative scheme: a query that sees only its last L0 characters predicts as it would at
    # position L0 - 1 of a window of L0 that ends where it stands
    model = models[encoding] if encoding != "t5" else with_random_t5_bias(models["t5"])
    long = ti.window_bits(model, 3 * L0, intervention="hide far keys", text=TEXT)[0]
    for p in (L0 - 1, L0, L0 + 5, 3 * L0 - 1):
        short = ti.window_bits(model, L0, text=TEXT[p - L0 + 1:p + 2])  # one window: chars p-15..p, target p+1
        assert short.shape == (1, L0)
        assert long[p] == pytest.approx(short[0, -1], abs=1e-4)
    plain = ti.window_bits(model, 3 * L0, text=TEXT)[0]
    np.testing.assert_allclose(long[:L0], plain[:L0], atol=1e-5)  # before L0 nothing is hidden
    if encoding != "none":
        assert np.abs(long[L0:] - plain[L0:]).max() > 1e-3  # past it the mask changes what the model reads


def test_position_means_by_hand():
    bits = np.arange(12.0).reshape(2, 6)  # windows [0..5], [6..11]
    np.testing.assert_allclose(ti.position_means(bits), [3, 4, 5, 6, 7, 8])
    np.testing.assert_allclose(ti.position_means(bits, 3), [(0 + 1 + 2 + 6 + 7 + 8) / 6, (3 + 4 + 5 + 9 + 10 + 11) / 6])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: ti.window_bits(m["t5"], 32, intervention="clamp", text=TEXT),
         "intervention must be one of 'clamp buckets', 'hide far keys', got 'clamp'"),
        (lambda m: ti.window_bits(m["alibi"], 32, intervention="clamp buckets", text=TEXT),
         "changes T5's buckets; this model's encoding is 'alibi'"),
        (lambda m: ti.window_bits(m["learned"], 32, intervention="hide far keys", text=TEXT),
         "knows positions 0..15, so seq_len must be <= 16, got 32"),
        (lambda m: ti.window_bits(m["none"], 16, text=""), "text is empty"),
        (lambda m: ti.window_bits(m["none"], 0, text=TEXT), "seq_len must be an integer >= 1"),
        (lambda m: ti.window_bits("model", 16), "must be a TrainedTransformer"),
        (lambda m: ti.clamped_t5_buckets(8, 0), "train_len must be an integer >= 1"),
        (lambda m: ti.position_means(np.zeros((2, 6)), 4), "width=4 must divide the number of positions, 6"),
        (lambda m: ti.position_means(np.zeros(6)), "bits must be 2-D"),
    ],
)
def test_bad_input_is_refused_by_name(models, call, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        call(models)


def test_only_text_models():
    model = pe_lib.train_transformer("reverse", "none", seq_len=4, steps=2, d_model=8, n_layers=1, n_heads=2,
                                     batch_size=2, progress=False)
    with pytest.raises(ValueError, match="scores language models \\(task 'text'\\), got a model of task 'reverse'"):
        ti.window_bits(model, 4)


def test_stored_models_score_what_the_stored_results_say():
    # chapter 20's stored seed-0 models, scored here, give the bits per character make experiments stored for them,
    # as trained and with each intervention, at the training length and at twice it
    from pe_lib.trained import text_runs

    stored = pathlib.Path(__file__).resolve().parents[2] / "notebooks" / "results" / "20_on_real_text"
    results = text_runs.collect(stored)
    encodings = [name for name, encoding, _ in text_runs.FINAL if name == encoding]
    for enc in encodings:  # every scheme's model is stored (issue 27)
        (model,) = text_runs.load_models(stored / f"final_{enc}_seed0.npz")
        cell = results["final"][enc]
        assert model.config.seed == 0 and model.encoding == enc
        L, n = cell["settings"]["seq_len"], cell["n_characters"]
        assert ti.window_bits(model, L, n_characters=n).mean() == pytest.approx(cell["bpc"][0][0], abs=1e-9)
        for arm, entry in cell["intervened"].items():
            again = ti.window_bits(model, 2 * L, intervention=arm, n_characters=n).mean()
            assert again == pytest.approx(entry["bpc"][0][1], abs=1e-9), (enc, arm)
