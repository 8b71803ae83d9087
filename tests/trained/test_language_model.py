"""The "text" task and pe_lib.task_loss: bits per character checked against cross-entropies computed by hand."""

import dataclasses

import numpy as np
import pytest

import pe_lib
from pe_lib.trained.corpus import TEXT_VOCAB_SIZE

TINY = dict(seq_len=4, steps=2, d_model=8, n_layers=1, n_heads=2, batch_size=2, progress=False)


@pytest.fixture(scope="module")
def tiny():
    return pe_lib.train_transformer("text", "none", **TINY)


def constant_logits(model, logits):
    """The model with its last layer norm's gain at 0 and bias e_0, so that every position's logits are
    row 0 of the unembedding, set to ``logits``."""
    params = dict(model.params)
    d = model.config.d_model
    params["lnf_g"] = np.zeros(d, np.float32)
    params["lnf_b"] = np.eye(d, dtype=np.float32)[0]
    unembed = np.zeros((d, TEXT_VOCAB_SIZE), np.float32)
    unembed[0] = logits
    params["unembed"] = unembed
    return dataclasses.replace(model, params=params)


def test_text_models_read_ascii_codes(tiny):
    assert tiny.params["embed"].shape == (TEXT_VOCAB_SIZE, 8) and np.isfinite(tiny.losses).all()


def test_uniform_guess_is_seven_bits(tiny):
    model = constant_logits(tiny, np.zeros(TEXT_VOCAB_SIZE))
    assert pe_lib.task_loss(model, 3, text="aabaabaaba") == pytest.approx(7.0, abs=1e-6)  # log2(128)


def test_planted_distribution_by_hand(tiny):
    logits = np.full(TEXT_VOCAB_SIZE, -60.0)
    logits[ord("a")], logits[ord("b")] = np.log(3.0), 0.0  # p(a) = 3/4, p(b) = 1/4, others ~ e^-60
    model = constant_logits(tiny, logits)
    # "aabaabaaba" in windows of 3 predicts "aba", "aba", "aba" (the 10th character is left out
    # only if it does not fit: here 9 predicted characters, 6 a's and 3 b's)
    expected = (6 * np.log2(4 / 3) + 3 * np.log2(4)) / 9
    assert pe_lib.task_loss(model, 3, text="aabaabaaba") == pytest.approx(expected, abs=1e-5)
    # windows of 2: "aa|ba|ab|aa|b" predicts "ab", "aa", "ba", "ab": 5 a's and 3 b's
    expected = (5 * np.log2(4 / 3) + 3 * np.log2(4)) / 8
    assert pe_lib.task_loss(model, 2, text="aabaabaaba") == pytest.approx(expected, abs=1e-5)


def test_windows_see_only_their_own_past(tiny):
    # a causal model scores a window the same whatever stands after it in the text
    a = pe_lib.task_loss(tiny, 4, text="abcdefghi")  # 2 windows: abcd -> bcde, efgh -> fghi
    b = pe_lib.task_loss(tiny, 4, text="abcdefghiXYZ")  # 2 windows + 3 characters that do not fill a third
    assert a == b


@pytest.mark.parametrize("encoding", ["sinusoidal", "learned", "rope", "alibi"])
def test_every_encoding_trains_on_text(encoding):
    model = pe_lib.train_transformer("text", encoding, **TINY)
    assert model.losses[1] < model.losses[0]  # one Adam step already lowers the loss on fresh windows
    assert 1 < pe_lib.task_loss(model, 4, n_characters=64) < 10  # near log2(128) = 7 bits: barely trained


def test_learned_table_refuses_longer_windows():
    model = pe_lib.train_transformer("text", "learned", **TINY)
    with pytest.raises(ValueError, match="knows positions 0..3, so seq_len must be <= 4, got 8"):
        pe_lib.task_loss(model, 8)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: pe_lib.task_loss(m, 4, text=""), "text is empty"),
        (lambda m: pe_lib.task_loss(m, 4, corpus="wiki"), "corpus must be one of 'kjv'"),
        (lambda m: pe_lib.task_loss("model", 4), "must be a TrainedTransformer"),
        (lambda m: pe_lib.task_loss(m, 0), "seq_len must be an integer >= 1"),
    ],
)
def test_bad_input(tiny, call, message):
    with pytest.raises(ValueError, match=message):
        call(tiny)


def test_only_language_models():
    model = pe_lib.train_transformer("lookback", "none", seq_len=8, steps=1, d_model=8, n_layers=1, progress=False)
    with pytest.raises(ValueError, match="text_loss scores language models"):
        pe_lib.text_loss(model, 8)
    with pytest.raises(ValueError, match="apply only to models of task 'text'"):
        pe_lib.task_loss(model, 8, text="abc")


def test_task_loss_sends_text_models_to_text_loss_and_refuses_the_synthetic_options():
    model = pe_lib.train_transformer("text", "none", seq_len=4, steps=1, d_model=8, n_layers=1, progress=False)
    assert pe_lib.task_loss(model, 4, text="abcdefghi") == pe_lib.text_loss(model, 4, text="abcdefghi")
    with pytest.raises(ValueError, match="takes n_characters, text and corpus"):
        pe_lib.task_loss(model, 4, max_offset=2)


def test_log2_softmax_of_large_logits_row_by_row_in_float64():
    """Each row is shifted by its own maximum: logits 1000 apart neither overflow nor lose the other row."""
    from pe_lib.trained.language_model import log2_softmax

    got = log2_softmax(np.array([[1000.0, 0.0], [0.0, 0.0]], np.float32))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, [[0.0, -1000 / np.log(2)], [-1.0, -1.0]], rtol=1e-12, atol=1e-12)


def test_n_characters_scores_only_the_first_whole_windows(tiny):
    logits = np.full(TEXT_VOCAB_SIZE, -60.0)
    logits[ord("a")], logits[ord("b")] = np.log(3.0), 0.0  # p(a) = 3/4, p(b) = 1/4
    model = constant_logits(tiny, logits)
    # "aabaabaaba", windows of 2, 3 characters -> one whole window "aa" predicting "ab"
    expected = (np.log2(4 / 3) + np.log2(4)) / 2
    assert pe_lib.task_loss(model, 2, text="aabaabaaba", n_characters=3) == pytest.approx(expected, abs=1e-5)


def test_a_padded_batch_scores_its_own_windows_not_the_pads(tiny):
    """Three windows in a batch padded to EVAL_BATCH rows: the loss is that of the three windows, each run on its
    own and scored with a log-softmax written out here (planted: the logits of the last three rows, pads)."""
    import math

    from pe_lib.trained.training import run_model

    text = "abcdefghijklm"  # windows abcd -> bcde, efgh -> fghi, ijkl -> jklm
    total = 0.0
    for w in range(3):
        window = np.array([[ord(c) for c in text[4 * w:4 * w + 4]]], dtype=np.int32)
        logits = np.asarray(run_model(tiny, window), dtype=np.float64)[0]  # (4, V)
        for i in range(4):
            z = logits[i]
            top = z.max()
            log_sum = top + math.log(sum(math.exp(v - top) for v in z))
            total += (log_sum - z[ord(text[4 * w + i + 1])]) / math.log(2)
    assert pe_lib.text_loss(tiny, 4, text=text) == pytest.approx(total / 12, rel=1e-5)
