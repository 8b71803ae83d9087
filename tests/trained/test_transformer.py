"""The JAX model of pe_lib.transformer against the book's numpy definitions, on untrained weights.

No training here: models are built from their initial parameters, so only the forward pass compiles.
"""

import dataclasses
import subprocess
import sys

import numpy as np
import pytest

import pe_lib
from pe_lib.trained import training

jax = pytest.importorskip("jax")
tf = pytest.importorskip("pe_lib.trained.transformer")
FAST_COMPILE = {"xla_backend_optimization_level": 0}  # these functions run a few times: compile fast


def untrained(task, encoding, *, seq_len=12, d_model=16, n_layers=2, n_heads=2, vocab_size=11):
    """A TrainedTransformer holding its initial parameters (no step taken)."""
    config = training._config(task, encoding, seq_len=seq_len, steps=1, seed=0, d_model=d_model,
                              n_layers=n_layers, n_heads=n_heads, batch_size=4, learning_rate=1e-3,
                              vocab_size=vocab_size, offset=3)
    params = training._init(config, 0)
    return training.TrainedTransformer(config=config, params=params, initial_params=params, losses=np.zeros(0))


def tokens_for(model, n_seqs=3, seq_len=None, seed=1):
    seq_len = seq_len or model.seq_len
    return pe_lib.task_batch(model.task, n_seqs, seq_len, vocab_size=model.config.vocab_size, seed=seed)[0]


def layer_norm(x, g, b, eps=1e-5):  # written again from the formula, in float64
    mu = x.mean(-1, keepdims=True)
    return g * (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps) + b


def test_import_pe_lib_does_not_import_jax():
    code = "import sys, pe_lib; print('jax' in sys.modules, 'optax' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def inputs(encoding, seq_len, *, d_model=16, n_heads=2, causal=True, max_len=12):
    return tf.position_inputs(encoding, seq_len, d_model=d_model, n_heads=n_heads, causal=causal, max_len=max_len)


def test_sinusoidal_table_is_the_books():
    table = inputs("sinusoidal", 50)["table"]
    assert table.dtype == np.float32
    np.testing.assert_allclose(table, pe_lib.sinusoidal(50, 16), rtol=0, atol=1e-7)


@pytest.mark.parametrize("encoding", ["none", "learned", "rope", "alibi"])
def test_other_encodings_add_no_table_and_only_learned_its_rows(encoding):
    given = inputs(encoding, 20)
    assert not given["table"].any()
    assert given["learned"] == (encoding == "learned")
    np.testing.assert_array_equal(given["rows"], np.minimum(np.arange(20), 11))  # max_len 12: rows 0..11


@pytest.mark.parametrize("d_k", [2, 8, 16])
def test_rope_is_the_books(d_k):
    x = np.random.default_rng(d_k).normal(size=(2, 3, 40, d_k)).astype(np.float32)
    given = inputs("rope", 40, d_model=3 * d_k, n_heads=3)
    rotated = np.asarray(tf.rope_rotate(jax.numpy.asarray(x), given["cos"], given["sin"]))
    np.testing.assert_allclose(rotated, pe_lib.rope(x, 40), rtol=0, atol=1e-5)


@pytest.mark.parametrize("encoding", ["none", "sinusoidal", "learned", "alibi"])
def test_no_rotation_is_an_exact_identity(encoding):
    x = np.random.default_rng(0).normal(size=(1, 2, 20, 8)).astype(np.float32)
    given = inputs(encoding, 20)
    np.testing.assert_array_equal(np.asarray(tf.rope_rotate(jax.numpy.asarray(x), given["cos"], given["sin"])), x)


@pytest.mark.parametrize(("n_heads", "causal"), [(1, True), (4, False), (8, True)])
def test_alibi_bias_is_the_books(n_heads, causal):
    bias = inputs("alibi", 20, d_model=8 * n_heads, n_heads=n_heads, causal=causal)["bias"]
    assert bias.dtype == np.float32
    expected = pe_lib.alibi_bias(20, n_heads).astype(np.float32)
    below = np.tril(np.ones((20, 20), dtype=bool))  # j <= i
    np.testing.assert_array_equal(bias[:, below], expected[:, below])
    if causal:
        assert np.all(bias[:, ~below] == -np.inf)
    else:
        np.testing.assert_array_equal(bias, expected)


@pytest.mark.parametrize(
    ("task", "encoding"),
    [("lookback", "none"), ("lookback", "sinusoidal"), ("reverse", "learned"), ("lookback", "rope"),
     ("reverse", "rope"), ("lookback", "alibi"), ("reverse", "alibi")],
)
def test_every_head_is_pe_lib_attention_weights(task, encoding):
    """Each head's weights = pe_lib.attention_weights(q, k, bias, causal) with q, k computed again in
    numpy from the residual stream (rotated by pe_lib.rope for RoPE, biased by pe_lib.alibi_bias)."""
    model = untrained(task, encoding)
    tokens = tokens_for(model)
    states = pe_lib.residual_stream(model, tokens)[:, 0]  # (n_layers + 1, L, d) of the first sequence
    maps = pe_lib.trained_attention(model, tokens)[:, 0]  # (n_layers, H, L, L)
    n = tokens.shape[1]
    for layer, block in enumerate(model.params["blocks"]):
        h = layer_norm(states[layer].astype(np.float64), block["ln1_g"], block["ln1_b"])
        for head in range(model.config.n_heads):
            q, k = h @ block["w_q"][head], h @ block["w_k"][head]
            bias = None
            if encoding == "rope":
                q, k = pe_lib.rope(q, n), pe_lib.rope(k, n)
            if encoding == "alibi":
                bias = pe_lib.alibi_bias(n, model.config.n_heads)[head]
            expected = pe_lib.attention_weights(q, k, bias=bias, causal=task == "lookback")
            np.testing.assert_allclose(maps[layer, head], expected, rtol=0, atol=2e-6)


@pytest.mark.parametrize(
    ("task", "encoding"), [("lookback", "none"), ("reverse", "sinusoidal"), ("reverse", "learned")]
)
def test_blocks_are_pe_lib_layers_pre_ln(task, encoding):
    """At initialisation (layer-norm gains 1, biases 0) each block is pe_lib.transformer_block(norm='pre')
    on the same weights, and the input is embedding + the position table."""
    model = untrained(task, encoding)
    tokens = tokens_for(model)
    states = pe_lib.residual_stream(model, tokens).astype(np.float64)
    x0 = model.params["embed"][tokens].astype(np.float64)
    if encoding != "none":
        x0 = x0 + pe_lib.position_table(model)
    np.testing.assert_allclose(states[0], x0, rtol=0, atol=1e-6)
    for layer, block in enumerate(model.params["blocks"]):
        numpy_block = {key: block[key].astype(np.float64) for key in pe_lib.numpy_model.layers.BLOCK_KEYS}
        expected = pe_lib.transformer_block(states[layer], numpy_block, norm="pre", causal=task == "lookback")
        np.testing.assert_allclose(states[layer + 1], expected, rtol=0, atol=5e-5)


def test_causal_model_does_not_look_ahead():
    model = untrained("lookback", "rope")
    tokens = tokens_for(model, n_seqs=1)
    changed = tokens.copy()
    changed[0, 7:] = (changed[0, 7:] + 1) % model.config.vocab_size
    a, b = pe_lib.residual_stream(model, tokens), pe_lib.residual_stream(model, changed)
    np.testing.assert_array_equal(a[:, 0, :7], b[:, 0, :7])  # positions before 7 see nothing after
    assert np.abs(a[:, 0, 7:] - b[:, 0, 7:]).max() > 0.1


def test_nope_without_mask_is_permutation_equivariant():
    model = untrained("reverse", "none")
    tokens = tokens_for(model, n_seqs=1)[0]
    perm = np.random.default_rng(0).permutation(tokens.size)
    a, b = pe_lib.residual_stream(model, tokens), pe_lib.residual_stream(model, tokens[perm])
    np.testing.assert_allclose(b, a[:, perm], rtol=0, atol=1e-5)


@pytest.mark.parametrize("encoding", ["learned", "rope"])
def test_gradient_matches_central_difference(encoding):
    """jax.grad of the loss against (f(theta + eps v) - f(theta - eps v)) / 2 eps along random v, in float64."""
    from jax.flatten_util import ravel_pytree

    model = untrained("lookback", encoding, seq_len=7, d_model=4, n_layers=1, n_heads=1, vocab_size=5)
    tokens, targets, counts = pe_lib.task_batch("lookback", 3, 7, vocab_size=5, offset=3, seed=2)
    given = tf.position_inputs(encoding, 7, d_model=4, n_heads=1, causal=True, max_len=7)
    with jax.enable_x64(True):
        theta, unravel = ravel_pytree(jax.tree_util.tree_map(lambda a: np.asarray(a, np.float64), model.params))
        assert theta.dtype == np.float64

        def loss(t):
            return tf.loss_fn(unravel(t), tokens, targets, counts, given)

        grad = np.asarray(jax.jit(jax.grad(loss), compiler_options=FAST_COMPILE)(theta))
        value = jax.jit(loss, compiler_options=FAST_COMPILE)
        for seed in range(3):
            v = np.random.default_rng(seed).normal(size=theta.shape)
            eps = 1e-5
            numeric = (float(value(theta + eps * v)) - float(value(theta - eps * v))) / (2 * eps)
            assert grad @ v == pytest.approx(numeric, rel=1e-6, abs=1e-9)


def test_loss_is_mean_cross_entropy_of_scored_positions():
    model = untrained("lookback", "sinusoidal")
    tokens, targets, counts = pe_lib.task_batch("lookback", 4, 12, vocab_size=11, offset=3, seed=4)
    logits = training.run_model(model, tokens).astype(np.float64)
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    picked = np.take_along_axis(logp, targets[..., None], -1)[..., 0]
    expected = -picked[:, counts].mean()  # only i >= k = 3
    loss = jax.jit(tf.loss_fn, compiler_options=FAST_COMPILE)
    got = float(loss(model.params, tokens, targets, counts, inputs("sinusoidal", 12)))
    assert got == pytest.approx(expected, rel=1e-5)


def test_initial_weights_do_not_depend_on_the_encoding():
    a, b = untrained("lookback", "rope"), untrained("lookback", "learned")
    np.testing.assert_array_equal(a.params["blocks"][1]["w_v"], b.params["blocks"][1]["w_v"])
    np.testing.assert_array_equal(a.params["unembed"], b.params["unembed"])
    np.testing.assert_array_equal(a.params["pos"], b.params["pos"])  # every model has one; only learned adds it
    assert dataclasses.replace(a.config, encoding="learned") == b.config


def test_rope_angles_are_float32_cos_and_sin_of_m_omega():
    """cos and sin of theta = m * 10000^(-2i/d_k), written again here, in the float32 the docstring promises."""
    cos, sin = tf.rope_angles(6, 4)
    assert cos.dtype == np.float32 and sin.dtype == np.float32
    theta = np.arange(6)[:, None] * 10000.0 ** (-2 * np.arange(2)[None, :] / 4)
    np.testing.assert_allclose(cos, np.cos(theta), rtol=0, atol=1e-7)
    np.testing.assert_allclose(sin, np.sin(theta), rtol=0, atol=1e-7)


def test_limit_offsets_masks_far_keys_of_a_bias_with_leading_axes():
    """-inf exactly where |i - j| > max_offset, the rest kept, on a (B, H, L, L) bias with H != L, in float32."""
    bias = np.random.default_rng(0).normal(size=(2, 3, 5, 5))
    got = tf.limit_offsets(bias, 1)
    assert got.dtype == np.float32 and got.shape == (2, 3, 5, 5)
    i, j = np.indices((5, 5))
    far = np.abs(i - j) > 1
    assert np.all(got[..., far] == -np.inf)
    np.testing.assert_array_equal(got[..., ~far], bias.astype(np.float32)[..., ~far])


def test_initial_parameters_have_the_documented_shapes_scales_and_dtype():
    """Every array float32; weights N(0, 1/fan_in) (d_ff = 4 d_model), embeddings N(0, 1), the learned
    table N(0, 1/2), gains 1 and biases 0; the embeddings are the first draw of default_rng([seed, 1])."""
    d_model, n_heads, vocab, max_len = 64, 4, 50, 40
    p = tf.init_params(3, vocab_size=vocab, d_model=d_model, n_layers=1, n_heads=n_heads, max_len=max_len)
    assert all(leaf.dtype == np.float32 for leaf in jax.tree_util.tree_leaves(p))
    np.testing.assert_array_equal(p["embed"], np.random.default_rng([3, 1]).standard_normal((vocab, d_model))
                                  .astype(np.float32))
    block = p["blocks"][0]
    expected_std = {"w_q": d_model**-0.5, "w_k": d_model**-0.5, "w_v": d_model**-0.5, "w_o": d_model**-0.5,
                    "w_1": d_model**-0.5, "w_2": (4 * d_model) ** -0.5}
    assert block["w_q"].shape == (n_heads, d_model, d_model // n_heads)
    assert block["w_1"].shape == (d_model, 4 * d_model) and block["w_2"].shape == (4 * d_model, d_model)
    for name, std in expected_std.items():  # >= 4096 draws each: the sample std is within 5% of std
        assert np.std(block[name]) == pytest.approx(std, rel=0.05), name
    assert np.std(p["unembed"]) == pytest.approx(d_model**-0.5, rel=0.05)
    assert np.std(p["pos"]) == pytest.approx(np.sqrt(0.5), rel=0.05) and p["pos"].shape == (max_len, d_model)
    for gain in (block["ln1_g"], block["ln2_g"], p["lnf_g"]):
        np.testing.assert_array_equal(gain, np.ones(d_model))
    for bias in (block["ln1_b"], block["ln2_b"], block["b_2"], p["lnf_b"], block["b_1"], p["rel_bias"]):
        assert not bias.any()
    assert block["b_1"].shape == (4 * d_model,) and p["rel_bias"].shape == (32, n_heads)


def test_forward_collects_the_attention_weights_unless_asked_for_scores():
    """forward(..., collect=True) returns the weights (rows of non-negative numbers summing to 1), not the scores."""
    model = untrained("reverse", "none", seq_len=5, d_model=8, n_layers=1)
    tokens = tokens_for(model, n_seqs=1)
    given = inputs("none", 5, d_model=8, causal=False, max_len=5)
    collected = jax.jit(lambda p, t, i: tf.forward(p, t, i, collect=True), compiler_options=FAST_COMPILE)
    logits, states, maps = (np.asarray(a) for a in collected(model.params, tokens, given))
    assert maps.shape == (1, 1, 2, 5, 5) and states.shape == (2, 1, 5, 8) and logits.shape == (1, 5, 11)
    assert maps.min() >= 0
    np.testing.assert_allclose(maps.sum(-1), 1, rtol=0, atol=1e-6)


@pytest.mark.parametrize("encoding", ["none", "sinusoidal", "learned", "rope", "alibi", "t5"])
def test_position_inputs_are_float32_and_int32(encoding):
    """The docstring's dtypes: every input float32, the rows of the learned table and T5's buckets int32."""
    given = inputs(encoding, 6, d_model=8, n_heads=2, causal=False, max_len=6)
    ints = {"rows", "buckets"}
    assert {name: given[name].dtype for name in given} == {
        name: np.dtype(np.int32 if name in ints else np.float32) for name in given}
    assert given["cos"].shape == given["sin"].shape == (6, 2) and given["buckets"].shape == (6, 6)
