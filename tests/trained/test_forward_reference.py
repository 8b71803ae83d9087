"""The trained model's logits against a forward pass written again, in numpy, from the maths.

tests/trained/test_transformer.py checks the JAX model piece by piece (its tables against pe_lib's
numpy functions, its attention weights). This file checks the whole: for every encoding, the logits
that chapters 14-16 read (:func:`pe_lib.trained.training.run_model`, compiled) equal those of an
independent float64 numpy implementation of the model in pe_lib/trained/transformer.py's docstring,
written from the formulas (the sinusoidal table, RoPE's rotation, ALiBi's slopes and T5's buckets
included) and calling nothing of pe_lib. Parameters are random, layer-norm gains and all biases included, so that
no weight is the identity or zero by construction. Tolerance: float32 rounding of the JAX model.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

jax = pytest.importorskip("jax")
training = pytest.importorskip("pe_lib.trained.training")
tf = pytest.importorskip("pe_lib.trained.transformer")

ENCODINGS = ("none", "sinusoidal", "learned", "rope", "alibi", "t5")
D_MODEL, N_LAYERS, VOCAB, TRAIN_LEN = 16, 2, 11, 10
RTOL, ATOL = 2e-5, 2e-5  # float32: the logits are of order 1-10


# ---- the model, from the maths (float64) ------------------------------------------------------------
def layer_norm(x, g, b, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return g * (x - mean) / np.sqrt(var + eps) + b


def sinusoidal_table(n, d):
    """PE(pos, 2k) = sin(pos / 10000^(2k/d)), PE(pos, 2k+1) = cos(pos / 10000^(2k/d)) (Vaswani et al. 3.5)."""
    table = np.zeros((n, d))
    for pos in range(n):
        for k in range(d // 2):
            angle = pos / 10000 ** (2 * k / d)
            table[pos, 2 * k], table[pos, 2 * k + 1] = math.sin(angle), math.cos(angle)
    return table


def rotate(x, positions):
    """RoPE (Su et al. eq. 34): pair (2i, 2i+1) of the vector at position m turned by m * 10000^(-2i/d)."""
    d = x.shape[-1]
    out = np.empty_like(x)
    for row, m in enumerate(positions):
        for i in range(d // 2):
            t = m * 10000 ** (-2 * i / d)
            a, b = x[row, 2 * i], x[row, 2 * i + 1]
            out[row, 2 * i], out[row, 2 * i + 1] = a * math.cos(t) - b * math.sin(t), a * math.sin(t) + b * math.cos(t)
    return out


def alibi_slopes(h):
    """Press et al.: 2^(-8/H), 2^(-16/H), ... for H a power of two; otherwise those of the largest
    power of two P below H, then every other slope of 2P heads."""

    def geometric(n):
        return [2 ** (-8 * (i + 1) / n) for i in range(n)]

    p = 2 ** int(math.log2(h))
    return geometric(p) + geometric(2 * p)[0::2][: h - p]


def t5_bucket(rel, *, bidirectional, num_buckets=32, max_distance=128):
    """T5's bucket of one relative position ``rel`` = key minus query (Raffel et al. 2020, 2.1; the
    rule of T5's code): with ``bidirectional`` the buckets are halved, the upper half for keys after
    the query; otherwise a key after the query counts as distance 0. Of the ``n`` buckets of a
    direction, distances 0 .. n/2 - 1 get one each, and a distance a >= n/2 gets
    n/2 + floor(ln(a / (n/2)) / ln(max_distance / (n/2)) * (n - n/2)), at most n - 1."""
    n, first = num_buckets, 0
    if bidirectional:
        n //= 2
        if rel > 0:
            first = n
        a = abs(rel)
    else:
        a = max(0, -rel)
    exact = n // 2
    if a < exact:
        return first + a
    return first + min(n - 1, exact + int(math.log(a / exact) / math.log(max_distance / exact) * (n - exact)))


def reference_logits(params, tokens, *, encoding, causal, n_heads):
    """Logits (B, L, V) of the model for ``tokens`` (B, L), in float64 loops over heads and rows."""
    p = {k: np.asarray(v, np.float64) for k, v in params.items() if k != "blocks"}
    blocks = [{k: np.asarray(v, np.float64) for k, v in b.items()} for b in params["blocks"]]
    n = tokens.shape[1]
    d = p["embed"].shape[1]
    d_k = d // n_heads
    slopes = alibi_slopes(n_heads)
    buckets = [[t5_bucket(j - i, bidirectional=not causal) for j in range(n)] for i in range(n)]
    out = []
    for seq in tokens:
        x = p["embed"][seq]  # E[t_i]
        if encoding == "sinusoidal":
            x = x + sinusoidal_table(n, d)
        if encoding == "learned":
            x = x + p["pos"][np.minimum(np.arange(n), p["pos"].shape[0] - 1)]
        for blk in blocks:
            h = layer_norm(x, blk["ln1_g"], blk["ln1_b"])
            heads = []
            for head in range(n_heads):
                q, k, v = h @ blk["w_q"][head], h @ blk["w_k"][head], h @ blk["w_v"][head]
                if encoding == "rope":
                    q, k = rotate(q, range(n)), rotate(k, range(n))
                s = q @ k.T / math.sqrt(d_k)
                for i in range(n):
                    for j in range(n):
                        if encoding == "alibi":
                            s[i, j] -= slopes[head] * abs(i - j)
                        if encoding == "t5":  # one trained bias per head and bucket, the same in every block
                            s[i, j] += p["rel_bias"][buckets[i][j], head]
                        if causal and j > i:
                            s[i, j] = -np.inf
                a = np.exp(s - s.max(1, keepdims=True))
                heads.append((a / a.sum(1, keepdims=True)) @ v)
            x = x + np.concatenate(heads, axis=1) @ blk["w_o"]
            h = layer_norm(x, blk["ln2_g"], blk["ln2_b"])
            x = x + np.maximum(0, h @ blk["w_1"] + blk["b_1"]) @ blk["w_2"] + blk["b_2"]
        out.append(layer_norm(x, p["lnf_g"], p["lnf_b"]) @ p["unembed"])
    return np.stack(out)


# ---- the model under test ---------------------------------------------------------------------------
def random_params(seed, *, n_heads, d_model=D_MODEL, n_layers=N_LAYERS, vocab=VOCAB, max_len=TRAIN_LEN):
    """Every parameter random (float32), in the layout of pe_lib/trained/transformer.py."""
    rng = np.random.default_rng([seed, 20])
    d_k, d_ff = d_model // n_heads, 4 * d_model

    def r(*shape, scale=1.0, mean=0.0):
        return (mean + scale * rng.standard_normal(shape)).astype(np.float32)

    def block():
        return {
            "ln1_g": r(d_model, scale=0.3, mean=1), "ln1_b": r(d_model, scale=0.3),
            "ln2_g": r(d_model, scale=0.3, mean=1), "ln2_b": r(d_model, scale=0.3),
            "w_q": r(n_heads, d_model, d_k, scale=d_model**-0.5), "w_k": r(n_heads, d_model, d_k, scale=d_model**-0.5),
            "w_v": r(n_heads, d_model, d_k, scale=d_model**-0.5), "w_o": r(d_model, d_model, scale=d_model**-0.5),
            "w_1": r(d_model, d_ff, scale=d_model**-0.5), "b_1": r(d_ff, scale=0.3),
            "w_2": r(d_ff, d_model, scale=d_ff**-0.5), "b_2": r(d_model, scale=0.3),
        }  # fmt: skip

    return {
        "embed": r(vocab, d_model), "pos": r(max_len, d_model, scale=0.5),
        "blocks": [block() for _ in range(n_layers)],
        "lnf_g": r(d_model, scale=0.3, mean=1), "lnf_b": r(d_model, scale=0.3),
        "unembed": r(d_model, vocab, scale=d_model**-0.5), "rel_bias": r(32, n_heads),
    }  # fmt: skip


def model(task, encoding, *, n_heads, seed=0):
    d_model = 6 * n_heads if n_heads == 3 else D_MODEL  # three heads of width 6
    config = training._config(task, encoding, seq_len=TRAIN_LEN, steps=1, seed=seed, d_model=d_model,
                              n_layers=N_LAYERS, n_heads=n_heads, batch_size=2, learning_rate=1e-3,
                              vocab_size=VOCAB, offset=2)  # fmt: skip
    params = random_params(seed, n_heads=n_heads, d_model=d_model)
    return training.TrainedTransformer(config=config, params=params, initial_params=params, losses=np.zeros(0))


def tokens(n_seqs, seq_len, seed=3):
    return np.random.default_rng(seed).integers(0, VOCAB, size=(n_seqs, seq_len)).astype(np.int32)


CASES = [(enc, task, heads) for enc in ENCODINGS for task, heads in (("lookback", 2), ("reverse", 4))]
CASES += [("alibi", "lookback", 3)]  # a head count that is not a power of two: ALiBi's other rule


@pytest.mark.parametrize(("encoding", "task", "n_heads"), CASES, ids=lambda v: str(v))
def test_logits_equal_an_independent_forward_pass(encoding, task, n_heads):
    m = model(task, encoding, n_heads=n_heads)
    seq = tokens(3, TRAIN_LEN)
    got = np.asarray(training.run_model(m, seq))
    want = reference_logits(m.params, seq, encoding=encoding, causal=task == "lookback", n_heads=n_heads)
    assert got.shape == want.shape == (3, TRAIN_LEN, VOCAB) and got.dtype == np.float32
    assert np.abs(want).max() > 1  # logits of a size that a wrong factor would change visibly
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("encoding", ["none", "sinusoidal", "rope", "alibi", "t5"])
def test_logits_beyond_the_training_length_equal_the_maths(encoding):
    # chapter 15 runs models at lengths they were not trained on; the learned table has no rows there
    m = model("lookback", encoding, n_heads=2)
    seq = tokens(2, 2 * TRAIN_LEN + 3)
    got = np.asarray(training.run_model(m, seq))
    want = reference_logits(m.params, seq, encoding=encoding, causal=True, n_heads=2)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("task", ["lookback", "reverse"])
def test_t5_logits_past_the_largest_distance_equal_the_maths(task):
    # 140 tokens reach distances beyond T5's max_distance 128, where every key shares its direction's last bucket
    m = model(task, "t5", n_heads=2)
    seq = tokens(1, 140)
    got = np.asarray(training.run_model(m, seq))
    want = reference_logits(m.params, seq, encoding="t5", causal=task == "lookback", n_heads=2)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def wrong_inputs(encoding, task, n_heads, seq_len):
    """The model's position inputs with one planted error of the kind each encoding could make."""
    causal = task == "lookback"
    given = tf.position_inputs(encoding, seq_len, d_model=D_MODEL, n_heads=n_heads, causal=causal, max_len=TRAIN_LEN)
    if encoding == "none":  # the causal mask lost
        given = tf.position_inputs(encoding, seq_len, d_model=D_MODEL, n_heads=n_heads, causal=not causal,
                                   max_len=TRAIN_LEN)  # fmt: skip
    elif encoding == "sinusoidal":  # sine and cosine swapped in every pair
        given["table"] = given["table"].reshape(seq_len, -1, 2)[..., ::-1].reshape(seq_len, -1).copy()
    elif encoding == "learned":  # the table read one row late
        given["rows"] = np.minimum(given["rows"] + 1, TRAIN_LEN - 1).astype(np.int32)
    elif encoding == "rope":  # rotated the other way
        given["sin"] = -given["sin"]
    elif encoding == "alibi":  # the heads' slopes in the reverse order
        given["bias"] = given["bias"][::-1].copy()
    elif encoding == "t5":  # the bucket of i - j (query minus key) instead of j - i
        given["buckets"] = given["buckets"].T.copy()
    return given


@pytest.mark.parametrize(("encoding", "task", "n_heads"), CASES[: 2 * len(ENCODINGS)], ids=lambda v: str(v))
def test_a_planted_error_in_the_model_changes_the_logits_beyond_the_tolerance(encoding, task, n_heads):
    m = model(task, encoding, n_heads=n_heads)
    seq = tokens(3, TRAIN_LEN)
    want = reference_logits(m.params, seq, encoding=encoding, causal=task == "lookback", n_heads=n_heads)
    right = np.asarray(tf.forward(m.params, seq, tf.position_inputs(
        encoding, TRAIN_LEN, d_model=D_MODEL, n_heads=n_heads, causal=task == "lookback", max_len=TRAIN_LEN)))
    wrong = np.asarray(tf.forward(m.params, seq, wrong_inputs(encoding, task, n_heads, TRAIN_LEN)))
    np.testing.assert_allclose(right, want, rtol=RTOL, atol=ATOL)
    assert np.abs(wrong - want).max() > 100 * (ATOL + RTOL * np.abs(want).max())


def test_the_reference_is_the_maths_on_hand_values():
    # the pieces of the reference against values worked out by hand, so that it is not wrong the same way
    sin, cos = math.sin, math.cos
    np.testing.assert_allclose(sinusoidal_table(2, 4), [[0, 1, 0, 1], [sin(1), cos(1), sin(0.01), cos(0.01)]])
    np.testing.assert_allclose(rotate(np.array([[1.0, 0.0, 1.0, 0.0]]), [2]), [[cos(2), sin(2), cos(0.02), sin(0.02)]])
    assert alibi_slopes(8) == [2**-1, 2**-2, 2**-3, 2**-4, 2**-5, 2**-6, 2**-7, 2**-8]  # the paper's example
    assert alibi_slopes(3) == [2**-4, 2**-8, 2**-2]  # P = 2: 1/16, 1/256, then slope 0 of four heads, 1/4
    # T5's buckets (32, up to distance 128), worked out by hand from the rule in t5_bucket's docstring
    both = [t5_bucket(r, bidirectional=True) for r in (0, -1, 1, -7, 7, -8, -16, -31, -32, -127, -128, 500)]
    assert both == [0, 1, 17, 7, 23, 8, 10, 11, 12, 15, 15, 31]  # 16: 8 + floor(8 ln 2/ln 16) = 10; 128: last
    causal = [t5_bucket(r, bidirectional=False) for r in (5, 0, -1, -15, -16, -20, -32, -64, -127, -128)]
    assert causal == [0, 0, 1, 15, 16, 17, 21, 26, 31, 31]  # 20: 16 + floor(16 ln 1.25 / ln 8) = 17
    np.testing.assert_allclose(layer_norm(np.array([1.0, 3.0]), np.ones(2), np.zeros(2), eps=0), [-1, 1])
