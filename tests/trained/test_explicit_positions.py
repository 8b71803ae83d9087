"""A trained model at explicit positions: the same as run_model at 0..L-1, and the invariances the
chapter relies on (padding with corrected positions, packing with restarts and the block mask, RoPE's
indifference to a common shift), checked on short runs of every encoding."""

import numpy as np
import pytest

import pe_lib
from pe_lib.trained.training import run_model

pytest.importorskip("jax")

SHORT = dict(steps=13, d_model=16, n_layers=1, n_heads=2, batch_size=4, seq_len=8)
L = 8


@pytest.fixture(scope="module")
def models():
    return {(task, enc): pe_lib.train_transformer(task, enc, progress=False, **SHORT)
            for enc in pe_lib.ENCODINGS for task in ("first", "reverse")}


@pytest.mark.parametrize("encoding", pe_lib.ENCODINGS)
@pytest.mark.parametrize("task", ["first", "reverse"])
def test_positions_0_to_L_and_the_tasks_mask_are_run_model(models, task, encoding):
    model = models[task, encoding]
    tokens = pe_lib.task_batch(task, 3, L, seed=1)[0]
    allowed = np.tril(np.ones((L, L), bool)) if task == "first" else np.ones((L, L), bool)
    got = pe_lib.logits_at(model, tokens, positions=np.arange(L), allowed=allowed)
    np.testing.assert_allclose(got, run_model(model, tokens), atol=5e-6)
    assert pe_lib.predict_at(model, tokens, positions=np.arange(L), allowed=allowed).shape == (3, L)


@pytest.mark.parametrize("encoding", pe_lib.ENCODINGS)
def test_left_padding_with_corrected_positions_changes_nothing(models, encoding):
    model = models["first", encoding]
    tokens = pe_lib.task_batch("first", 2, L, seed=2)[0]
    lengths = [5, 8]
    padded, mask = pe_lib.pad_batch(tokens, lengths)
    allowed = np.tril(np.ones((L, L), bool)) & (mask[:, None, :] == 1) | np.eye(L, dtype=bool)  # pads see themselves
    got = pe_lib.logits_at(model, padded, positions=pe_lib.position_ids_from_mask(mask), allowed=allowed)
    alone = run_model(model, tokens[:1, :5])  # the short prompt by itself
    np.testing.assert_allclose(got[0, 3:], alone[0], atol=5e-6)
    np.testing.assert_allclose(got[1], run_model(model, tokens[1:])[0], atol=5e-6)


@pytest.mark.parametrize("encoding", pe_lib.ENCODINGS)
def test_a_pack_with_restarts_and_the_block_mask_is_each_document_alone(models, encoding):
    model = models["reverse", encoding]
    a, b = pe_lib.task_batch("reverse", 2, 4, seed=3)[0]
    packed = np.concatenate([a, b])[None]
    got = pe_lib.logits_at(model, packed, positions=pe_lib.packed_position_ids([4, 4]),
                           allowed=pe_lib.packed_attention_mask([4, 4], causal=False))
    np.testing.assert_allclose(got[0, :4], run_model(model, a[None])[0], atol=5e-6)
    np.testing.assert_allclose(got[0, 4:], run_model(model, b[None])[0], atol=5e-6)


def test_rope_sees_only_differences_of_positions(models):
    model = models["first", "rope"]
    tokens = pe_lib.task_batch("first", 2, L, seed=4)[0]
    causal = np.tril(np.ones((L, L), bool))
    base = pe_lib.logits_at(model, tokens, positions=np.arange(L), allowed=causal)
    shifted = pe_lib.logits_at(model, tokens, positions=np.arange(L) + 5, allowed=causal)
    np.testing.assert_allclose(shifted, base, atol=5e-6)
    learned = models["first", "learned"]  # an absolute table does see the shift
    moved = pe_lib.logits_at(learned, tokens, positions=np.minimum(np.arange(L) + 1, L - 1), allowed=causal)
    assert np.abs(moved - run_model(learned, tokens)).max() > 1e-3
    # rope_scaling_frequencies' default frequencies with attention factor 1 are the model's own
    omega, factor = pe_lib.rope_scaling_frequencies(16 // 2, None)
    np.testing.assert_allclose(pe_lib.logits_at(model, tokens, positions=np.arange(L), allowed=causal,
                                                inv_freq=omega, attention_factor=factor), base, atol=5e-6)
    doubled = pe_lib.logits_at(model, tokens, positions=np.arange(L), allowed=causal, attention_factor=2.0)
    assert np.abs(doubled - base).max() > 1e-3


def test_rope_frequencies_and_factor_given_replace_the_models(models):
    # with every frequency 0 no token is rotated, and with attention factor 0 every query and key is 0:
    # either way the positions no longer matter, where the model's own frequencies see them
    model = models["first", "rope"]
    tokens = pe_lib.task_batch("first", 4, L, seed=5)[0]
    causal = np.tril(np.ones((L, L), bool))
    scattered = np.array([0, 6, 2, 9, 4, 30, 1, 7])
    own = pe_lib.logits_at(model, tokens, positions=scattered, allowed=causal)
    assert np.abs(own - pe_lib.logits_at(model, tokens, positions=np.arange(L), allowed=causal)).max() > 1e-2
    for change in ({"inv_freq": np.zeros(L // 2)}, {"attention_factor": 0.0}):
        at_0_to_7 = pe_lib.logits_at(model, tokens, positions=np.arange(L), allowed=causal, **change)
        got = pe_lib.logits_at(model, tokens, positions=scattered, allowed=causal, **change)
        np.testing.assert_allclose(got, at_0_to_7, atol=5e-6)
        predicted = pe_lib.predict_at(model, tokens, positions=scattered, allowed=causal, **change)
        np.testing.assert_array_equal(predicted, at_0_to_7.argmax(axis=-1))
        assert (predicted != own.argmax(axis=-1)).any()  # the change changes some answers


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: pe_lib.logits_at(m, np.zeros((1, L)), positions=np.arange(L), allowed=np.eye(L, dtype=bool)),
         "integer array of shape"),
        (lambda m: pe_lib.logits_at(m, np.full((1, L), 99), positions=np.arange(L), allowed=np.eye(L, dtype=bool)),
         r"tokens must lie in 0..15"),
        (lambda m: pe_lib.logits_at(m, np.zeros((1, L), int), positions=np.arange(L - 1),
                                    allowed=np.eye(L, dtype=bool)), r"positions must be integers of shape \(1, 8\)"),
        (lambda m: pe_lib.logits_at(m, np.zeros((1, L), int), positions=np.arange(L) - 1,
                                    allowed=np.eye(L, dtype=bool)), "positions must be >= 0, got -1"),
        (lambda m: pe_lib.logits_at(m, np.zeros((1, L), int), positions=np.arange(L) + 1,
                                    allowed=np.eye(L, dtype=bool)), "has 8 rows .positions 0..7.; got position 8"),
        (lambda m: pe_lib.logits_at(m, np.zeros((1, L), int), positions=np.arange(L), allowed=np.eye(L)),
         "allowed must be a bool array"),
        (lambda m: pe_lib.logits_at(m, np.zeros((1, L), int), positions=np.arange(L),
                                    allowed=np.zeros((L, L), bool)), "row 0, query 0 sees none"),
        (lambda m: pe_lib.logits_at(m, np.zeros((1, L), int), positions=np.arange(L), allowed=np.eye(L, dtype=bool),
                                    inv_freq=[1.0]), "inv_freq and attention_factor change RoPE"),
        (lambda m: pe_lib.logits_at(m, np.zeros((1, L), int), positions=np.arange(L), allowed=np.eye(L, dtype=bool),
                                    attention_factor=np.nan), "attention_factor must be a finite real number"),
        (lambda m: pe_lib.logits_at("model", np.zeros((1, L), int), positions=np.arange(L),
                                    allowed=np.eye(L, dtype=bool)), "must be a TrainedTransformer"),
    ],
)
def test_bad_input(models, call, message):
    with pytest.raises(ValueError, match=message):
        call(models["first", "learned"])


def test_bad_frequencies_for_rope(models):
    with pytest.raises(ValueError, match=r"one frequency per pair of a head: shape \(4,\), got \(3,\)"):
        pe_lib.logits_at(models["first", "rope"], np.zeros((1, L), int), positions=np.arange(L),
                         allowed=np.eye(L, dtype=bool), inv_freq=np.ones(3))


@pytest.mark.parametrize("encoding", ["rope", "alibi", "t5"])
def test_inputs_at_gives_the_documented_inputs(models, encoding):
    """inputs_at's arrays as its docstring says: float32 (int32 rows and buckets) of the documented shapes,
    the mask's bias 0 where a query may look and -inf elsewhere, RoPE's cosines and sines of p * omega_i with
    omega_i = 10000^(-2i/d_k) written out here, and ALiBi's -m_h |p_i - p_j| on top of the mask."""
    from pe_lib.trained.explicit_positions import inputs_at

    model = models["first", encoding]
    positions = np.array([[0, 1, 2, 3, 4, 5, 6, 7], [3, 9, 4, 0, 2, 8, 1, 5]])
    allowed = np.broadcast_to(np.tril(np.ones((L, L), bool)), (2, L, L))
    got = inputs_at(model, positions, allowed, inv_freq=None, attention_factor=1.0)
    n = model.config.n_layers  # one slice per block: forward slices any rotation but an (L, d_k/2) one
    shapes = {"table": (2, L, 16), "learned": (), "rows": (2, L), "cos": (n, 2, 1, L, 4), "sin": (n, 2, 1, L, 4),
              "bias": (n, 2, 2, L, L), "t5": (), "buckets": (2, L, L)}
    assert {k: v.shape for k, v in got.items()} == shapes
    assert {k: v.dtype.name for k, v in got.items()} == {
        k: "int32" if k in ("rows", "buckets") else "float32" for k in shapes}
    mask = np.where(allowed, 0.0, -np.inf)[:, None]
    distance = np.abs(positions[:, :, None] - positions[:, None, :])[:, None]
    slopes = np.array([2.0 ** -4, 2.0 ** -8])[None, :, None, None]  # ALiBi's m_h for 2 heads: 2^(-8h/H)
    expected_bias = mask - slopes * distance if encoding == "alibi" else np.broadcast_to(mask, (2, 2, L, L))
    for layer in range(n):
        np.testing.assert_allclose(got["bias"][layer], expected_bias, rtol=1e-6)
    omega = 10000.0 ** (-np.arange(0, 8, 2) / 8)  # d_k = 16 / 2 heads = 8
    theta = positions[:, None, :, None] * omega
    if encoding == "rope":
        for layer in range(n):
            np.testing.assert_allclose(got["cos"][layer], np.cos(theta), atol=1e-6)
            np.testing.assert_allclose(got["sin"][layer], np.sin(theta), atol=1e-6)
    else:
        assert (got["cos"] == 1).all() and (got["sin"] == 0).all()
    assert got["t5"] == (encoding == "t5") and got["learned"] == 0


def test_a_causal_t5_model_past_its_exact_buckets(models):
    # a causal model's buckets are one-sided: offsets 0..15 each have their own bucket, where two-sided buckets
    # turn logarithmic from 8. A model trained at length 16 sees offsets up to 15, so only the right ones agree.
    model = pe_lib.train_transformer("first", "t5", progress=False, **(SHORT | {"seq_len": 16}))
    tokens = pe_lib.task_batch("first", 2, 16, seed=6)[0]
    got = pe_lib.logits_at(model, tokens, positions=np.arange(16), allowed=np.tril(np.ones((16, 16), bool)))
    np.testing.assert_allclose(got, run_model(model, tokens), atol=5e-6)


def test_one_token_and_masks_that_leave_keys_unseen(models):
    model = models["first", "learned"]
    one = pe_lib.logits_at(model, np.array([[3]]), positions=np.array([0]), allowed=np.ones((1, 1), bool))
    np.testing.assert_allclose(one, run_model(model, np.array([[3]])), atol=5e-6)
    only_first_key = np.zeros((L, L), bool)
    only_first_key[:, 0] = True  # every query sees key 0 and nothing else: keys 1..7 are seen by no query
    got = pe_lib.logits_at(model, np.zeros((1, L), int), positions=np.arange(L), allowed=only_first_key)
    assert got.shape == (1, L, 16) and np.isfinite(got).all()


@pytest.mark.parametrize(
    ("encoding", "change", "message"),
    [
        ("learned", dict(tokens=np.zeros((1, 0), int)),
         "tokens must be a non-empty integer array of shape (batch, L), got dtype int64 and shape (1, 0)"),
        ("learned", dict(tokens=np.full((1, L), 16)),
         "tokens must lie in 0..15 (the model's vocabulary), got 16..16"),
        ("learned", dict(positions=np.arange(L - 1)),
         "positions must be integers of shape (1, 8) (one per token) or (8,) (the same for every row), "
         "got dtype int64 and shape (7,)"),
        ("learned", dict(allowed=np.diag(np.arange(L) > 0)),
         "every query must see at least one key: row 0, query 0 sees none (let a pad see itself: its output "
         "is never read)"),
        ("learned", dict(inv_freq=np.ones(4)),
         "inv_freq and attention_factor change RoPE; this model's encoding is 'learned'"),
        ("rope", dict(inv_freq=np.array([1.0, np.inf, 1.0, 1.0])),
         "inv_freq must be finite, got NaN or infinity among its values"),
        ("rope", dict(inv_freq=np.ones((1, 4))), "inv_freq must be 1-D, got shape (1, 4)"),
    ],
)
def test_bad_input_messages_in_full(models, encoding, change, message):
    call = dict(tokens=np.zeros((1, L), int), positions=np.arange(L), allowed=np.eye(L, dtype=bool)) | change
    tokens = call.pop("tokens")
    with pytest.raises(ValueError) as error:
        pe_lib.logits_at(models["first", encoding], tokens, **call)
    assert str(error.value) == message
