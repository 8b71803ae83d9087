"""Variants of real implementations: layouts, fairseq's table and positions, the i-over-[0, d) bug."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import bases, d_models

import pe_lib
from pe_lib.encodings.variants import (
    IMPLEMENTATIONS,
    buggy_sinusoidal,
    fairseq_positions,
    fairseq_sinusoidal,
    implementation_table,
    layout_permutation,
    permutation_matrix,
    permuted_blocks,
)


@given(d=d_models, n=st.integers(min_value=0, max_value=30), base=bases)
def test_layout_permutation_maps_one_layout_to_the_other(d, n, base):
    inter = pe_lib.sinusoidal(n, d, base=base)
    split = pe_lib.sinusoidal(n, d, base=base, layout="split")
    np.testing.assert_array_equal(inter[:, layout_permutation(d)], split)
    np.testing.assert_array_equal(split[:, layout_permutation(d, source="split", target="interleaved")], inter)
    np.testing.assert_array_equal(layout_permutation(d, source="split", target="split"), np.arange(d))


@given(d=d_models, seed=st.integers(min_value=0, max_value=2**16))
def test_a_first_layer_absorbs_the_permutation(d, seed):
    # x_split = x P, and (x P)(P^T W) = x W: the permuted weights W[perm] see the same thing
    rng = np.random.default_rng(seed)
    x = pe_lib.sinusoidal(12, d) + rng.normal(size=(12, d))
    w = rng.normal(size=(d, 5))
    perm = layout_permutation(d)
    p = permutation_matrix(perm)
    np.testing.assert_array_equal(x @ p, x[:, perm])
    np.testing.assert_allclose(p @ p.T, np.eye(d))
    np.testing.assert_allclose((x @ p) @ (p.T @ w), x @ w, atol=1e-12)
    np.testing.assert_array_equal(p.T @ w, w[perm])


LAYOUTS = ("interleaved", "split", "cos-first")


def test_cos_first_layout_is_all_cosines_then_all_sines():
    d, n = 8, 5
    inter = pe_lib.sinusoidal(n, d)
    cos_first = inter[:, layout_permutation(d, target="cos-first")]
    np.testing.assert_array_equal(cos_first[:, : d // 2], inter[:, 1::2])  # cos w_0 p .. cos w_3 p
    np.testing.assert_array_equal(cos_first[:, d // 2 :], inter[:, 0::2])  # sin w_0 p .. sin w_3 p
    np.testing.assert_array_equal(layout_permutation(4, target="cos-first"), [1, 3, 0, 2])
    np.testing.assert_array_equal(layout_permutation(4, source="cos-first", target="split"), [2, 3, 0, 1])


@given(d=d_models, n=st.integers(min_value=0, max_value=20))
def test_layout_permutations_compose(d, n):
    inter = pe_lib.sinusoidal(n, d)
    tables = {lay: inter[:, layout_permutation(d, target=lay)] for lay in LAYOUTS}
    for source in LAYOUTS:
        for target in LAYOUTS:
            perm = layout_permutation(d, source=source, target=target)
            np.testing.assert_array_equal(tables[source][:, perm], tables[target])


def test_dit_timestep_embedding_from_its_formula():
    # DiT's TimestepEmbedder: freqs_k = exp(-ln(10000) k / half) (float32), emb = [cos(t freqs) | sin(t freqs)]
    d, n = 16, 40
    half = d // 2
    freqs = np.exp(-np.log(10_000.0) * np.arange(half, dtype=np.float32) / half).astype(np.float32)
    args = np.arange(n, dtype=np.float32)[:, None] * freqs[None, :]
    reference = np.concatenate([np.cos(args), np.sin(args)], axis=1).astype(np.float64)
    np.testing.assert_allclose(implementation_table("DiT timestep embedding", n, d), reference, rtol=0, atol=2e-6)


@pytest.mark.parametrize(("norm", "residual", "causal"), [("post", True, False), ("pre", True, True),
                                                          ("post", False, True), ("pre", False, False)])
def test_a_permuted_model_computes_the_permuted_states(norm, residual, causal):
    d, n = 16, 7
    rng = np.random.default_rng(5)
    x = rng.normal(size=(2, n, d))
    blocks = pe_lib.init_blocks(2, d, n_heads=2, seed=3)
    for b in blocks:  # non-zero biases, so that their permutation is tested too
        b["b_1"], b["b_2"] = rng.normal(size=b["b_1"].shape), rng.normal(size=b["b_2"].shape)
    perm = rng.permutation(d)
    kw = dict(norm=norm, residual=residual, causal=causal)
    states = pe_lib.run_stack(x, blocks, **kw)
    permuted = pe_lib.run_stack(x[..., perm], permuted_blocks(blocks, perm), **kw)
    np.testing.assert_allclose(permuted, states[..., perm], rtol=0, atol=1e-12)
    # the inputs' weights alone (first block, reading side) are not enough once the stream is carried on
    first_only = [dict(blocks[0], **{k: v for k, v in permuted_blocks(blocks[:1], perm)[0].items()
                                     if k in ("w_q", "w_k", "w_v", "w_1")}), *blocks[1:]]
    partial = pe_lib.run_stack(x[..., perm], first_only, **kw)
    assert np.abs(partial[-1] - states[-1][..., perm]).max() > 0.1


def test_permuted_blocks_explicitly_and_bad_arguments():
    block = pe_lib.init_blocks(1, 4, n_heads=1, seed=0)[0]
    perm = np.array([2, 0, 3, 1])
    (new,) = permuted_blocks([block], perm)
    np.testing.assert_array_equal(new["w_q"][0], permutation_matrix(perm).T @ block["w_q"][0])  # P^T W_Q
    np.testing.assert_array_equal(new["w_o"], block["w_o"] @ permutation_matrix(perm))  # W_O P
    np.testing.assert_array_equal(new["b_2"], block["b_2"][perm])
    assert new["b_1"] is not block["b_1"]
    with pytest.raises(ValueError, match="perm must be a permutation"):
        permuted_blocks([block], [0, 1, 1, 2])
    with pytest.raises(ValueError, match="perm has 2 entries, but the block is for d_model=4"):
        permuted_blocks([block], [1, 0])
    with pytest.raises(ValueError, match="a block must be a dict"):
        permuted_blocks([{"w_q": 1}], perm)


def test_permutation_matrix_rejects_non_permutations():
    for bad in ([0, 0, 1], [1, 2, 3], [[0, 1]], [0.0, 1.0]):
        with pytest.raises(ValueError, match="perm must be a permutation"):
            permutation_matrix(np.asarray(bad))


@pytest.mark.parametrize("padding_idx", [0, 1, 3])
def test_fairseq_table(padding_idx):
    d, n = 16, 40
    table = fairseq_sinusoidal(n, d, padding_idx)
    assert table.shape == (n, d) and table.dtype == np.float32
    assert np.all(table[padding_idx] == 0)
    reference = pe_lib.sinusoidal(n, d, layout="split", convention="tensor2tensor", dtype=np.float32)
    others = np.arange(n) != padding_idx
    np.testing.assert_array_equal(table[others], reference[others])
    # the slowest pair turns by exactly 1/base per row: last sine column is sin(r / 10000)
    rows = np.arange(n)
    np.testing.assert_allclose(table[others, d // 2 - 1], np.sin(rows[others] / 10_000), atol=1e-7)
    # the first real token is looked up at row padding_idx + 1, i.e. at angle (padding_idx + 1) * omega
    first = table[padding_idx + 1]
    np.testing.assert_allclose(first, pe_lib.sinusoidal([padding_idx + 1], d, layout="split",
                                                        convention="tensor2tensor")[0], atol=1e-6)


def test_fairseq_without_padding_and_bad_arguments():
    table = fairseq_sinusoidal(5, 8)
    assert table[0, -1] == 1.0  # row 0 is position 0: cos 0 = 1, not a zeroed row
    assert fairseq_sinusoidal(5, 8, dtype=np.float64).dtype == np.float64
    with pytest.raises(ValueError, match="padding_idx must be a row"):
        fairseq_sinusoidal(5, 8, 5)
    with pytest.raises(ValueError, match="d_model/2 - 1, which is zero"):
        fairseq_sinusoidal(5, 2, 1)  # fairseq divides by half_dim - 1 = 0 here
    with pytest.raises(ValueError, match="num_embeddings"):
        fairseq_sinusoidal(0, 8)


def test_fairseq_positions_with_left_padding():
    pad = 1
    tokens = np.array([[pad, pad, 7, 8, 9], [4, 5, 6, 7, 8]])
    pos = fairseq_positions(tokens, pad)
    np.testing.assert_array_equal(pos, [[1, 1, 2, 3, 4], [2, 3, 4, 5, 6]])
    # looked up in the table: padding gets the zero row, the c-th real token the encoding of pad + c
    table = fairseq_sinusoidal(10, 8, pad)
    vectors = table[pos]
    assert np.all(vectors[0, :2] == 0)
    np.testing.assert_array_equal(vectors[0, 2:], vectors[1, :3])  # same words count from the same start
    np.testing.assert_array_equal(fairseq_positions([3, 3, 3], 0), [1, 2, 3])


@given(tokens=st.lists(st.integers(min_value=0, max_value=5), min_size=1, max_size=30),
       pad=st.integers(min_value=0, max_value=5))
def test_fairseq_positions_count_real_tokens(tokens, pad):
    pos = fairseq_positions(np.array(tokens), pad)
    count = 0
    for t, p in zip(tokens, pos, strict=True):
        if t == pad:
            assert p == pad
        else:
            count += 1
            assert p == pad + count


def test_fairseq_positions_bad_tokens():
    with pytest.raises(ValueError, match="tokens must be a 1-D or 2-D array of integer"):
        fairseq_positions([0.5, 1.0], 1)
    with pytest.raises(ValueError, match="tokens must be"):
        fairseq_positions(np.zeros((2, 2, 2), dtype=int), 1)
    with pytest.raises(ValueError, match="padding_idx"):
        fairseq_positions([1, 2], -1)


def test_buggy_table_follows_its_formula():
    d, base = 8, 10_000.0
    table = buggy_sinusoidal(6, d)
    for pos in range(6):
        for j in range(d):
            angle = pos / base ** (2 * j / d)
            expected = math.sin(angle) if j % 2 == 0 else math.cos(angle)
            assert table[pos, j] == pytest.approx(expected, abs=1e-15)
    correct = pe_lib.sinusoidal(6, d)
    np.testing.assert_array_equal(table[:, 0], correct[:, 0])  # only column 0 is unchanged
    assert np.abs(table[:, 1] - correct[:, 1]).max() > 0.1


def test_buggy_table_has_no_linear_shift_map():
    pos = np.arange(1000)
    _, rms_ok = pe_lib.fit_linear_map(pe_lib.sinusoidal(pos, 16), pe_lib.sinusoidal(pos + 5, 16))
    _, rms_bug = pe_lib.fit_linear_map(buggy_sinusoidal(pos, 16), buggy_sinusoidal(pos + 5, 16))
    assert rms_ok < 1e-12 and rms_bug > 0.1


def test_buggy_bad_arguments():
    with pytest.raises(ValueError, match="base"):
        buggy_sinusoidal(4, 8, base=1.0)
    with pytest.raises(ValueError, match="d_model"):
        buggy_sinusoidal(4, 9)


def test_implementation_tables():
    n, d = 50, 16
    paper = pe_lib.sinusoidal(n, d)
    for name, spec in IMPLEMENTATIONS.items():
        table = implementation_table(name, n, d)
        assert table.shape == (n, d) and table.dtype == np.float64, name
        if spec["convention"] == "paper":
            back = table[:, layout_permutation(d, source=spec["layout"], target="interleaved")]
            assert np.abs(back - paper).max() < 1e-4, name  # float32 rounding only
    t2t = implementation_table("tensor2tensor", n, d)
    np.testing.assert_allclose(t2t[:, d // 2 - 1], np.sin(np.arange(n) / 10_000), atol=1e-7)
    fairseq = implementation_table("fairseq", n, d, padding_idx=1)
    np.testing.assert_allclose(fairseq, pe_lib.sinusoidal(np.arange(2, n + 2), d, layout="split",
                                                          convention="tensor2tensor"), atol=1e-5)
    bug = implementation_table("jadore801120 before the fix", n, d)
    np.testing.assert_allclose(bug, buggy_sinusoidal(n, d), atol=1e-7)
    with pytest.raises(ValueError, match="name must be one of"):
        implementation_table("bert", n, d)


# ---- found by `make mutate` (each kills mutants that the tests above let live) ---------------------
def test_implementation_table_fairseq_starts_at_padding_idx_plus_one_by_default():
    # d = 4 in tensor2tensor's split layout: omega = (1, 10000^(-1/(2-1))) = (1, 1e-4); default padding_idx 1
    first = implementation_table("fairseq", 1, 4)[0]
    np.testing.assert_allclose(first, [np.sin(2.0), np.sin(2e-4), np.cos(2.0), np.cos(2e-4)], rtol=1e-6)
    assert implementation_table("paper", 0, 4).shape == (0, 4)  # no tokens is allowed


def test_implementation_table_computes_and_stores_in_the_implementations_dtypes():
    # both are the paper's interleaved table stored in float32; the PyTorch tutorial computes the angles
    # in float32 too, DistilBERT in float64: far positions differ by more than float32's rounding of the result
    tutorial = implementation_table("PyTorch tutorial", 2000, 16)
    distilbert = implementation_table("DistilBERT (Hugging Face)", 2000, 16)
    assert np.abs(tutorial - distilbert).max() > 1e-5
    marian = implementation_table("Marian (Hugging Face)", 50, 16)  # computed in float64, stored in float32
    np.testing.assert_array_equal(marian, marian.astype(np.float32).astype(np.float64))
    assert not np.array_equal(marian, pe_lib.sinusoidal(50, 16)[:, layout_permutation(16)])


def test_fairseq_sinusoidal_uses_its_base():
    # d = 4, base 100: omega = (1, 100^-1) = (1, 0.01); row 3 is [sin 3, sin 0.03, cos 3, cos 0.03]
    np.testing.assert_allclose(fairseq_sinusoidal(4, 4, base=100.0)[3],
                               [np.sin(3.0), np.sin(0.03), np.cos(3.0), np.cos(0.03)], rtol=1e-6)


NARROW_BLOCK = {"w_q": np.zeros((1, 4, 2)), "w_k": np.zeros((1, 4, 2)), "w_v": np.zeros((1, 4, 2)),
                "w_o": np.zeros((2, 4)), "w_1": np.zeros((4, 1)), "b_1": np.zeros(1), "w_2": np.zeros((1, 4)),
                "b_2": np.zeros(4)}


@pytest.mark.parametrize(("call", "match"), [
    (lambda: layout_permutation(4, source="x"), r"^source must be one of"),
    (lambda: layout_permutation(4, target="x"), r"^target must be one of"),
    (lambda: permuted_blocks([{"w_q": 0}], np.arange(4)),
     r"^a block must be a dict with keys w_q, w_k, w_v, w_o, w_1, b_1, w_2, b_2 \(see pe_lib.init_blocks\)$"),
    (lambda: permuted_blocks([NARROW_BLOCK], np.arange(4)), r"^perm has 4 entries, but the block is for d_model=2$"),
    (lambda: fairseq_sinusoidal(0, 4), r"^num_embeddings must be an integer >= 1"),
    (lambda: fairseq_sinusoidal(4, 4, -1), r"^padding_idx must be an integer >= 0"),
    (lambda: fairseq_positions([[1, 2]], -1), r"^padding_idx must be an integer >= 0"),
    (lambda: implementation_table("paper", -1, 4), r"^n must be an integer >= 0"),
])
def test_errors_name_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()
