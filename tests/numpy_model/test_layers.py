"""The random Transformer stack: layer norm, multi-head attention, MLP, blocks with and without
residual connections, and the properties the depth experiment relies on."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pe_lib
from pe_lib.numpy_model import layers

D = 16


def _x(seed=0, shape=(5, D)):
    return np.random.default_rng(seed).normal(size=shape)


@given(seed=st.integers(0, 10_000), shift=st.floats(-100, 100), scale=st.floats(0.1, 100))
def test_layer_norm_standardises_rows_and_ignores_shift_and_scale(seed, shift, scale):
    x = _x(seed, (3, 4, D))
    y = pe_lib.layer_norm(x, eps=1e-12)
    assert y.shape == x.shape
    np.testing.assert_allclose(y.mean(axis=-1), 0.0, atol=1e-12)
    np.testing.assert_allclose(y.var(axis=-1), 1.0, atol=1e-9)
    np.testing.assert_allclose(pe_lib.layer_norm(scale * x + shift, eps=1e-12), y, atol=1e-7)


def test_layer_norm_eps_and_a_single_vector():
    v = np.array([1.0, 3.0])  # mean 2, variance 1
    np.testing.assert_allclose(pe_lib.layer_norm(v, eps=1.0), [-1 / np.sqrt(2), 1 / np.sqrt(2)])
    np.testing.assert_array_equal(pe_lib.layer_norm(np.full(4, 7.0)), np.zeros(4))  # constant row -> 0
    with pytest.raises(ValueError, match="eps must be > 0"):
        pe_lib.layer_norm(v, eps=0.0)
    with pytest.raises(ValueError, match=r"x must have shape \(\.\.\., d_model\), got shape \(\)"):
        pe_lib.layer_norm(1.0)
    with pytest.raises(ValueError, match="x must be finite"):
        pe_lib.layer_norm([1.0, np.nan])


def test_init_blocks_shapes_defaults_and_scale():
    blocks = pe_lib.init_blocks(3, 64, n_heads=4, seed=1)
    assert len(blocks) == 3
    b = blocks[0]
    assert b["w_q"].shape == b["w_k"].shape == b["w_v"].shape == (4, 64, 16)
    assert b["w_o"].shape == (64, 64)
    assert b["w_1"].shape == (64, 256) and b["w_2"].shape == (256, 64)  # d_ff = 4 d_model
    np.testing.assert_array_equal(b["b_1"], 0.0)
    np.testing.assert_array_equal(b["b_2"], 0.0)
    # entries are N(0, scale^2 / fan_in): sample variance close to 1/64 and 1/256
    assert np.var(np.concatenate([bl["w_1"].ravel() for bl in blocks])) == pytest.approx(1 / 64, rel=0.05)
    assert np.var(np.concatenate([bl["w_2"].ravel() for bl in blocks])) == pytest.approx(1 / 256, rel=0.05)
    doubled = pe_lib.init_blocks(3, 64, n_heads=4, seed=1, scale=2.0)
    np.testing.assert_allclose(doubled[2]["w_o"], 2.0 * blocks[2]["w_o"])
    assert pe_lib.init_blocks(0, 8) == []
    assert pe_lib.init_blocks(1, 8, d_ff=5)[0]["w_1"].shape == (8, 5)


def test_init_blocks_is_deterministic_per_seed():
    a, b, c = (pe_lib.init_blocks(2, D, seed=s) for s in (7, 7, 8))
    for key in layers.BLOCK_KEYS:
        np.testing.assert_array_equal(a[1][key], b[1][key])
    assert not np.array_equal(a[0]["w_q"], c[0]["w_q"])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_layers": -1, "d_model": 8}, "n_layers must be an integer >= 0"),
        ({"n_layers": 1, "d_model": 7}, "d_model must be a positive even integer"),
        ({"n_layers": 1, "d_model": 8, "n_heads": 3}, "n_heads must divide d_model, got d_model=8 and n_heads=3"),
        ({"n_layers": 1, "d_model": 8, "n_heads": 0}, "n_heads must be an integer >= 1"),
        ({"n_layers": 1, "d_model": 8, "d_ff": 0}, "d_ff must be an integer >= 1"),
        ({"n_layers": 1, "d_model": 8, "seed": -2}, "seed must be an integer >= 0"),
        ({"n_layers": 1, "d_model": 8, "scale": -1.0}, "scale must be >= 0"),
        ({"n_layers": 1, "d_model": 8, "scale": float("nan")}, "scale must be a finite real number"),
    ],
)
def test_init_blocks_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pe_lib.init_blocks(**kwargs)


@pytest.mark.parametrize("causal", [False, True])
def test_multi_head_attention_is_concatenated_heads_times_w_o(causal):
    # the batched computation against pe_lib.self_attention, one sequence and one head at a time
    x = _x(1, (3, 5, D))
    block = pe_lib.init_blocks(1, D, n_heads=4, seed=3)[0]
    for s in range(3):
        heads = [pe_lib.self_attention(x[s], block["w_q"][h], block["w_k"][h], block["w_v"][h], causal=causal)
                 for h in range(4)]
        expected = np.concatenate(heads, axis=1) @ block["w_o"]
        np.testing.assert_allclose(pe_lib.multi_head_attention(x, block, causal=causal)[s], expected, atol=1e-12)
        np.testing.assert_allclose(pe_lib.multi_head_attention(x[s], block, causal=causal), expected, atol=1e-12)


def test_multi_head_attention_by_hand_for_one_head_of_two_tokens():
    # d_model = 2, one head: W_Q = W_K = W_V = W_O = I, so the scores are x x^T / sqrt(2)
    block = {"w_q": np.eye(2)[None], "w_k": np.eye(2)[None], "w_v": np.eye(2)[None], "w_o": np.eye(2),
             "w_1": np.zeros((2, 1)), "b_1": np.zeros(1), "w_2": np.zeros((1, 2)), "b_2": np.zeros(2)}
    x = np.array([[1.0, 0.0], [0.0, 2.0]])
    s = np.array([[1.0, 0.0], [0.0, 4.0]]) / np.sqrt(2)  # x_i . x_j / sqrt(d_k)
    w = np.exp(s) / np.exp(s).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(pe_lib.multi_head_attention(x, block), w @ x, atol=1e-15)
    np.testing.assert_allclose(pe_lib.multi_head_attention(x, block, causal=True), [[1.0, 0.0], w[1] @ x],
                               atol=1e-15)  # token 0 sees only itself


def test_multi_head_attention_reports_overflow():
    block = pe_lib.init_blocks(1, D, seed=0)[0]
    with pytest.raises(ValueError, match="attention scores overflow float64"):
        pe_lib.multi_head_attention(np.full((3, D), 1e200), block)


def test_batches_are_independent_sequences():
    x = _x(2, (3, 5, D))
    blocks = pe_lib.init_blocks(2, D, seed=4)
    batched = pe_lib.run_stack(x, blocks, causal=True)
    for b in range(3):
        np.testing.assert_allclose(batched[:, b], pe_lib.run_stack(x[b], blocks, causal=True), atol=1e-12)


def test_mlp_is_relu_feed_forward():
    x = _x(5, (2, 3, D))
    block = pe_lib.init_blocks(1, D, seed=5)[0]
    block["b_1"] = np.linspace(-1, 1, 4 * D)
    block["b_2"] = np.linspace(0, 1, D)
    expected = np.maximum(0, x @ block["w_1"] + block["b_1"]) @ block["w_2"] + block["b_2"]
    np.testing.assert_allclose(pe_lib.mlp(x, block), expected, atol=1e-12)


def test_zero_blocks_pre_ln_residual_stack_is_the_identity():
    x = _x(6, (2, 5, D))
    blocks = pe_lib.init_blocks(4, D, seed=0, scale=0.0)
    states = pe_lib.run_stack(x, blocks, residual=True, norm="pre")
    assert states.shape == (5, 2, 5, D)
    for layer in states:
        np.testing.assert_array_equal(layer, x)
    # without the residual path, zero sublayers output zero
    np.testing.assert_array_equal(pe_lib.run_stack(x, blocks, residual=False, norm="pre")[1:], 0.0)


def test_zero_blocks_post_ln_residual_stack_is_layer_norm():
    x = _x(7)
    states = pe_lib.run_stack(x, pe_lib.init_blocks(3, D, scale=0.0), residual=True, norm="post")
    for layer in states[1:]:
        np.testing.assert_allclose(layer, pe_lib.layer_norm(pe_lib.layer_norm(x)), atol=1e-12)


def test_block_formulas_post_and_pre():
    x = _x(8)
    block = pe_lib.init_blocks(1, D, seed=8)[0]
    ln, attn, ff = pe_lib.layer_norm, pe_lib.multi_head_attention, pe_lib.mlp
    y = ln(x + attn(x, block))
    np.testing.assert_allclose(pe_lib.transformer_block(x, block), ln(y + ff(y, block)), atol=1e-12)
    y = ln(attn(x, block))
    np.testing.assert_allclose(pe_lib.transformer_block(x, block, residual=False), ln(ff(y, block)), atol=1e-12)
    y = x + attn(ln(x), block)
    np.testing.assert_allclose(pe_lib.transformer_block(x, block, norm="pre"), y + ff(ln(y), block), atol=1e-12)


def test_run_stack_keeps_the_input_and_is_deterministic():
    x = _x(9)
    blocks = pe_lib.init_blocks(3, D, seed=9)
    a = pe_lib.run_stack(x, blocks)
    np.testing.assert_array_equal(a[0], x)
    np.testing.assert_array_equal(a, pe_lib.run_stack(x, pe_lib.init_blocks(3, D, seed=9)))
    assert not np.allclose(a[3], pe_lib.run_stack(x, pe_lib.init_blocks(3, D, seed=10))[3])
    assert pe_lib.run_stack(x, []).shape == (1, 5, D)


@given(seed=st.integers(0, 1000), residual=st.booleans(), norm=st.sampled_from(["post", "pre"]))
def test_stack_without_mask_is_permutation_equivariant(seed, residual, norm):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(6, D))
    perm = rng.permutation(6)
    blocks = pe_lib.init_blocks(2, D, seed=seed)
    out = pe_lib.run_stack(x, blocks, residual=residual, norm=norm)
    np.testing.assert_allclose(pe_lib.run_stack(x[perm], blocks, residual=residual, norm=norm), out[:, perm],
                               atol=1e-9)


@given(seed=st.integers(0, 1000), m=st.integers(1, 6))
def test_causal_stack_outputs_depend_only_on_the_prefix(seed, m):
    x = np.random.default_rng(seed).normal(size=(7, D))
    blocks = pe_lib.init_blocks(2, D, seed=seed)
    full = pe_lib.run_stack(x, blocks, causal=True)
    np.testing.assert_allclose(pe_lib.run_stack(x[:m], blocks, causal=True), full[:, :m], atol=1e-9)


def test_stack_rejects_bad_arguments():
    x = _x(0)
    blocks = pe_lib.init_blocks(1, D)
    with pytest.raises(ValueError, match=r"norm must be one of 'post', 'pre', got 'mid'"):
        pe_lib.run_stack(x, blocks, norm="mid")
    with pytest.raises(ValueError, match="norm must be one of"):
        pe_lib.transformer_block(x, blocks[0], norm="both")
    with pytest.raises(ValueError, match="blocks must be a list of blocks from pe_lib.init_blocks, got dict"):
        pe_lib.run_stack(x, blocks[0])
    with pytest.raises(ValueError, match="a block must be a dict with keys w_q"):
        pe_lib.run_stack(x, [{"w_q": 1}])
    with pytest.raises(ValueError, match="a block must be a dict"):
        pe_lib.mlp(x, "block")
    with pytest.raises(ValueError, match="the block is for d_model=8, but x has width 16"):
        pe_lib.run_stack(x, pe_lib.init_blocks(1, 8))
    with pytest.raises(ValueError, match=r"x must have shape \(n, d_model\) or \(batch, n, d_model\), got shape"):
        pe_lib.run_stack(x[0], blocks)
    with pytest.raises(ValueError, match="x must be finite"):
        pe_lib.run_stack(np.full((2, D), np.inf), blocks)


# ---- found by `make mutate` (each kills mutants that the tests above let live) ---------------------
IDENTITY_BLOCK = {"w_q": np.eye(2)[None], "w_k": np.eye(2)[None], "w_v": np.eye(2)[None], "w_o": np.eye(2),
                  "w_1": np.zeros((2, 1)), "b_1": np.zeros(1), "w_2": np.zeros((1, 2)), "b_2": np.zeros(2)}


def test_softmax_shifts_each_row_by_its_own_maximum():
    # scores x_i . x_j / sqrt(2): row 0 is (1131.4, 0), which overflows e^s; row 1 is (0, 0.707), ~1131 below it
    x = np.array([[40.0, 0.0], [0.0, 1.0]])
    w1 = np.exp([0.0, 1 / np.sqrt(2)]) / np.exp([0.0, 1 / np.sqrt(2)]).sum()  # row 1 by hand
    out = pe_lib.multi_head_attention(x, IDENTITY_BLOCK)
    np.testing.assert_allclose(out, [[40.0, 0.0], w1 @ x], rtol=0, atol=1e-12)  # row 0: all weight on itself


def test_overflow_is_reported_without_numpys_warnings():
    import warnings
    block = pe_lib.init_blocks(1, D, seed=0)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # inf - inf in the products: numpy's "invalid value" stays silent
        with pytest.raises(ValueError) as error:
            pe_lib.multi_head_attention(np.full((3, D), 1e200), block)
    assert str(error.value) == ("the attention scores overflow float64 (finite inputs, infinite products); "
                                "scale the inputs down")


@pytest.mark.parametrize(("call", "match"), [
    (lambda: pe_lib.layer_norm(_x(), eps=float("nan")), r"^eps must be a finite real number"),
    (lambda: pe_lib.multi_head_attention(_x(), {"w_q": 0}),
     r"^a block must be a dict with keys w_q, w_k, w_v, w_o, w_1, b_1, w_2, b_2 \(see pe_lib.init_blocks\)$"),
    # heads 2 wide in all (one head, d_k = 2) cannot make a 4-wide model: W_O has 2 rows
    (lambda: pe_lib.multi_head_attention(np.zeros((2, 4)), {
        "w_q": np.zeros((1, 4, 2)), "w_k": np.zeros((1, 4, 2)), "w_v": np.zeros((1, 4, 2)), "w_o": np.zeros((2, 4)),
        "w_1": np.zeros((4, 1)), "b_1": np.zeros(1), "w_2": np.zeros((1, 4)), "b_2": np.zeros(4)}),
     r"^the block is for d_model=2, but x has width 4$"),
    (lambda: pe_lib.mlp(np.float64(1.0), IDENTITY_BLOCK), r"^x must have shape \(\.\.\., d_model\), got shape \(\)$"),
])
def test_errors_name_what_is_wrong(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_init_blocks_default_seed_is_0():
    default, zero = pe_lib.init_blocks(1, 8)[0], pe_lib.init_blocks(1, 8, seed=0)[0]
    assert all(np.array_equal(default[k], zero[k]) for k in layers.BLOCK_KEYS)


def test_mlp_takes_a_single_vector():
    block = pe_lib.init_blocks(1, D, seed=5)[0]
    block["b_1"] = np.linspace(-1, 1, 4 * D)
    v = _x(6, (D,))
    np.testing.assert_allclose(pe_lib.mlp(v, block), np.maximum(0, v @ block["w_1"] + block["b_1"]) @ block["w_2"]
                               + block["b_2"], atol=1e-12)


def test_a_pre_ln_causal_block_and_the_residual_default():
    x = _x(7, (4, D))
    block = pe_lib.init_blocks(1, D, seed=7)[0]
    changed = x.copy()
    changed[-1] = _x(8, (D,))  # a new last token (not a shift, which layer_norm removes): the others cannot see it
    out = pe_lib.transformer_block(x, block, norm="pre", causal=True)
    np.testing.assert_allclose(pe_lib.transformer_block(changed, block, norm="pre", causal=True)[:-1], out[:-1],
                               atol=1e-12)
    # run_stack's default is residual=True: pre-LN with zero weights is then the identity
    zero = {k: np.zeros_like(v) for k, v in block.items()}
    np.testing.assert_allclose(pe_lib.run_stack(x, [zero], norm="pre")[1], x, atol=1e-15)


@pytest.mark.parametrize(("residual", "norm", "causal"), [(True, "post", False), (False, "pre", True)])
def test_run_stack_feeds_each_block_the_previous_blocks_output(residual, norm, causal):
    # state l + 1 is block l applied to state l (not to the input, not to an earlier state): built here
    # one block at a time with transformer_block, and the blocks differ, so a wrong feed changes the states
    x = _x(21)
    blocks = pe_lib.init_blocks(4, D, seed=21)
    states = pe_lib.run_stack(x, blocks, residual=residual, norm=norm, causal=causal)
    h = x
    for layer, block in enumerate(blocks, start=1):
        h = pe_lib.transformer_block(h, block, residual=residual, norm=norm, causal=causal)
        np.testing.assert_array_equal(states[layer], h)
    from_input = pe_lib.transformer_block(x, blocks[3], residual=residual, norm=norm, causal=causal)
    assert not np.allclose(states[4], from_input)


def test_pre_ln_block_without_residual_has_no_skip_around_the_mlp():
    # pre-LN without skips: y = Attn(LN(x)), z = MLP(LN(y)) (planted: z = y + MLP(LN(y)))
    x = np.random.default_rng(0).normal(size=(5, 8))
    block = layers.init_blocks(1, 8, n_heads=2, seed=1)[0]
    y = layers.multi_head_attention(layers.layer_norm(x), block)
    expected = layers.mlp(layers.layer_norm(y), block)
    np.testing.assert_allclose(layers.transformer_block(x, block, residual=False, norm="pre"), expected,
                               rtol=1e-12, atol=1e-12)
