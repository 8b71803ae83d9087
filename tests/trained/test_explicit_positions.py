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
