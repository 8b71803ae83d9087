"""offset_r_squared against an independent loop over the entries, on matrices whose answer is known; a model read
by the other RoPE layout against columns swapped by hand."""

import numpy as np
import pytest

import pe_lib
from pe_lib.trained import training


def r_squared_by_loops(a, rows):
    entries = [(a[i, j], i - j) for i in rows for j in range(i + 1)]
    groups = {}
    for value, offset in entries:
        groups.setdefault(offset, []).append(value)
    means = {offset: sum(v) / len(v) for offset, v in groups.items()}
    mean = sum(v for v, _ in entries) / len(entries)
    residual = sum((v - means[o]) ** 2 for v, o in entries)
    total = sum((v - mean) ** 2 for v, _ in entries)
    return 1 - residual / total


def test_a_toeplitz_matrix_is_explained_by_its_offsets():
    i, j = np.indices((10, 10))
    assert pe_lib.offset_r_squared(np.cos(i - j) + 0.1 * (i - j)) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("rows", [None, [5, 6, 7, 8, 9], [0, 9], [3]])
def test_matches_a_loop_over_the_entries(rows):
    a = np.random.default_rng(0).random((10, 10))
    expected = r_squared_by_loops(a, range(10) if rows is None else rows)
    assert pe_lib.offset_r_squared(a, queries=rows) == pytest.approx(expected, rel=1e-12)


def test_a_matrix_that_depends_on_the_query_only():
    i, _ = np.indices((6, 6))
    value = pe_lib.offset_r_squared(i.astype(float))
    assert value == pytest.approx(r_squared_by_loops(i.astype(float), range(6)), rel=1e-12)
    assert value < 0.5


def test_keys_after_the_query_are_ignored():
    a = np.random.default_rng(1).random((6, 6))
    b = a.copy()
    b[np.triu_indices(6, 1)] = 1e6
    assert pe_lib.offset_r_squared(a) == pe_lib.offset_r_squared(b)


@pytest.mark.parametrize("weights, queries, message", [
    (np.zeros((3, 4)), None, "square"),
    (np.zeros(4), None, "2-D"),
    (np.ones((4, 4)), None, "constant"),
    (np.eye(4), [4], "query rows"),
    (np.eye(4), [-1], "query rows"),
    (np.eye(4), [], "query rows"),
    (np.eye(4), [0.5], "query rows"),
])
def test_bad_input(weights, queries, message):
    with pytest.raises(ValueError, match=message):
        pe_lib.offset_r_squared(weights, queries=queries)


def test_model_with_permuted_qk_reorders_only_query_and_key_columns():
    config = training._config("lookback", "rope", seq_len=8, steps=1, seed=0, d_model=4, n_layers=2, n_heads=1,
                              batch_size=2, learning_rate=1e-3, vocab_size=4, offset=3)
    rng = np.random.default_rng(0)
    blocks = [{"w_q": rng.normal(size=(1, 4, 4)), "w_k": rng.normal(size=(1, 4, 4)), "w_v": rng.normal(size=(1, 4, 4))}
              for _ in range(2)]
    params = {"blocks": blocks, "pos": rng.normal(size=(8, 4))}
    model = training.TrainedTransformer(config, params, {"init": 1}, np.arange(3.0))
    perm = np.array([0, 2, 1, 3])  # pairs (0, 1), (2, 3) read as (0, 2), (1, 3)
    read = pe_lib.model_with_permuted_qk(model, perm)
    for before, after in zip(blocks, read.params["blocks"], strict=True):
        for name in ("w_q", "w_k"):  # columns 1 and 2 swap, 0 and 3 stay: written out, not via perm
            np.testing.assert_array_equal(after[name][..., 0], before[name][..., 0])
            np.testing.assert_array_equal(after[name][..., 1], before[name][..., 2])
            np.testing.assert_array_equal(after[name][..., 2], before[name][..., 1])
            np.testing.assert_array_equal(after[name][..., 3], before[name][..., 3])
        assert after["w_v"] is before["w_v"]
    assert read.params["pos"] is params["pos"] and read.losses is model.losses
    assert read.initial_params is model.initial_params and read.config is model.config
    assert model.params["blocks"] is blocks  # the model itself is untouched
    same = pe_lib.model_with_permuted_qk(model, np.arange(4))
    for before, after in zip(blocks, same.params["blocks"], strict=True):
        np.testing.assert_array_equal(after["w_q"], before["w_q"])
    with pytest.raises(ValueError, match="model must be a TrainedTransformer"):
        pe_lib.model_with_permuted_qk(params, perm)
    with pytest.raises(ValueError, match="must hold the layer blocks"):
        pe_lib.model_with_permuted_qk(training.TrainedTransformer(config, {}, {}, np.zeros(0)), perm)
    with pytest.raises(ValueError, match="perm must be a permutation of 0 .. 3"):
        pe_lib.model_with_permuted_qk(model, [0, 1, 2])


def untrained(encoding):
    config = training._config("reverse", encoding, seq_len=6, steps=1, seed=0, d_model=8, n_layers=1, n_heads=2,
                              batch_size=2, learning_rate=1e-3, vocab_size=5, offset=3)
    params = training._init(config, 0)
    return training.TrainedTransformer(config=config, params=params, initial_params=params, losses=np.zeros(0))


def test_position_tables_in_float64_hold_the_float32_vectors_the_model_adds():
    learned = untrained("learned")
    table = pe_lib.position_table(learned, 4)
    assert table.dtype == np.float64
    np.testing.assert_array_equal(table, learned.params["pos"][:4])
    table = pe_lib.position_table(untrained("sinusoidal"), 4)
    assert table.dtype == np.float64
    np.testing.assert_array_equal(table, pe_lib.sinusoidal(4, 8).astype(np.float32))  # rounded as the model's


def test_attention_by_offset_needs_a_matrix_and_a_single_token_is_a_sequence():
    with pytest.raises(ValueError, match="weights"):
        pe_lib.attention_by_offset(np.ones(3))
    model = untrained("none")
    assert pe_lib.predict(model, np.array([3])).shape == (1,)
    with pytest.raises(ValueError, match="non-empty integer array"):
        pe_lib.predict(model, np.array([], dtype=int))


def test_model_with_uniform_attention_makes_the_chosen_block_exactly_uniform():
    from pe_lib.trained.model_analysis import model_with_uniform_attention

    model = pe_lib.train_transformer("lookback", "none", seq_len=6, steps=20, d_model=8, n_layers=2, n_heads=2,
                                     batch_size=4, offset=1, progress=False)
    tokens = pe_lib.task_batch("lookback", 3, 6, offset=1, seed=2)[0]
    uniform = model_with_uniform_attention(model)
    a = pe_lib.trained_attention(uniform, tokens)  # (layers, batch, heads, L, L)
    m = np.arange(6)
    expected = np.tril(np.ones((6, 6))) / (m[:, None] + 1)  # 1/(m+1) on keys 0..m, written out
    np.testing.assert_allclose(a[0], np.broadcast_to(expected, a[0].shape), atol=1e-7)
    before = pe_lib.trained_attention(model, tokens)
    assert np.abs(before[0] - a[0]).max() > 1e-3  # the trained block 1 was not uniform to start with
    both = pe_lib.trained_attention(model_with_uniform_attention(model, [0, 1]), tokens)
    np.testing.assert_allclose(both[1], np.broadcast_to(expected, both[1].shape), atol=1e-7)
    assert uniform.params["blocks"][1] is model.params["blocks"][1]  # block 2 untouched
    assert model.params["blocks"][0]["w_q"].any()  # the model itself is not changed
    for bad in ((), (2,), (True,), "0", 0):
        with pytest.raises(ValueError, match="blocks must be"):
            model_with_uniform_attention(model, bad)
    with pytest.raises(ValueError, match="model must be a TrainedTransformer"):
        model_with_uniform_attention(model.params)



def test_attention_by_offset_reads_the_keys_before_the_query():
    # a lower-triangular map with a_{i,j} = 10 i + j: offset D averages a_{i, i-D} over i = D .. 2, written out
    # (planted: the diagonal above, keys after the query)
    w = np.array([[0.0, 1.0, 2.0], [10.0, 11.0, 12.0], [20.0, 21.0, 22.0]]) * np.tri(3)
    expected = [(0 + 11 + 22) / 3, (10 + 21) / 2, 20.0]
    np.testing.assert_allclose(pe_lib.attention_by_offset(w), expected, rtol=1e-15)


def test_model_with_uniform_attention_changes_only_the_blocks_it_names():
    # blocks=(1,) zeroes block 1's query weights and leaves block 0 as it was (planted: block 0 zeroed as well)
    from pe_lib.trained.model_analysis import model_with_uniform_attention

    config = training._config("lookback", "none", seq_len=6, steps=1, seed=0, d_model=8, n_layers=2, n_heads=2,
                              batch_size=2, learning_rate=1e-3, vocab_size=5, offset=1)
    params = training._init(config, 0)
    model = training.TrainedTransformer(config=config, params=params, initial_params=params, losses=np.zeros(0))
    second = model_with_uniform_attention(model, (1,))
    assert second.params["blocks"][0] is model.params["blocks"][0]
    assert not np.asarray(second.params["blocks"][1]["w_q"]).any()
    assert np.asarray(model.params["blocks"][1]["w_q"]).any()
