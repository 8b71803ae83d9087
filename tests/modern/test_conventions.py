"""Converted checkpoints: the misread RoPE layout against two independent RoPE codes, the timestep
convention detector against an embedding written from the formula."""

import math

import numpy as np
import pytest

import pe_lib


def rope_interleaved(x, m):
    """Independent RoPE, interleaved pairs (2i, 2i+1), as complex numbers (Meta's LLaMA formulation)."""
    d = x.shape[-1]
    omega = 10_000.0 ** (-np.arange(0, d, 2) / d)
    z = (x[..., 0::2] + 1j * x[..., 1::2]) * np.exp(1j * m[:, None] * omega)
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = z.real, z.imag
    return out


def rope_split(x, m):
    """Independent RoPE, split halves with rotate_half (GPT-NeoX's formulation)."""
    d = x.shape[-1]
    omega = 10_000.0 ** (-np.arange(0, d, 2) / d)
    theta = np.concatenate([m[:, None] * omega] * 2, axis=1)
    rotated_half = np.concatenate([-x[..., d // 2:], x[..., : d // 2]], axis=-1)
    return x * np.cos(theta) + rotated_half * np.sin(theta)


CODES = {"interleaved": rope_interleaved, "split": rope_split}


def scores(code, w_q, w_k, h, m):
    q, k = code(h @ w_q, m), code(h @ w_k, m)
    return q @ k.T


@pytest.mark.parametrize("stored", ["interleaved", "split"])
@pytest.mark.parametrize("read_as", ["interleaved", "split"])
@pytest.mark.parametrize("d_k", [2, 8, 12])
def test_wrong_code_equals_right_code_on_permuted_weights(stored, read_as, d_k):
    rng = np.random.default_rng(d_k)
    h, w_q, w_k = rng.normal(size=(7, 5)), rng.normal(size=(5, d_k)), rng.normal(size=(5, d_k))
    m = np.arange(7.0) * 3
    p = pe_lib.layout_misread_permutation(d_k, stored=stored, read_as=read_as)
    wrong = scores(CODES[read_as], w_q, w_k, h, m)
    np.testing.assert_allclose(scores(CODES[stored], w_q[:, p], w_k[:, p], h, m), wrong, atol=1e-9)
    if stored != read_as and d_k > 2:  # the mismatch changes the scores: the check can fail
        assert np.abs(scores(CODES[stored], w_q, w_k, h, m) - wrong).max() > 1e-3


def test_hand_worked_permutation():
    assert pe_lib.layout_misread_permutation(8, stored="interleaved", read_as="split").tolist() == [
        0, 4, 1, 5, 2, 6, 3, 7]
    assert pe_lib.layout_misread_permutation(8, stored="split", read_as="interleaved").tolist() == [
        0, 2, 4, 6, 1, 3, 5, 7]
    assert pe_lib.layout_misread_permutation(6, stored="split", read_as="split").tolist() == list(range(6))


def embedding(t, dim, flip, shift):
    """Independent timestep embedding from the formula, a loop over entries."""
    h = dim // 2
    out = np.zeros((len(t), dim))
    for n, tn in enumerate(t):
        for k in range(h):
            angle = tn * math.exp(-math.log(10_000) * k / (h - shift))
            first, second = (math.cos(angle), math.sin(angle)) if flip else (math.sin(angle), math.cos(angle))
            out[n, k], out[n, h + k] = first, second
    return out


@pytest.mark.parametrize("convention", pe_lib.TIMESTEP_CONVENTIONS)
def test_detector_finds_the_convention(convention):
    t = np.array([0.0, 1.0, 10.0, 250.0, 999.0])
    table = embedding(t, 16, *convention)
    match = pe_lib.timestep_convention_match(table, t)
    assert set(match) == set(pe_lib.TIMESTEP_CONVENTIONS)
    assert match[convention] == pytest.approx(1.0, abs=1e-12)
    assert all(rho < 0.99 for c, rho in match.items() if c != convention)
    x, y = table.ravel(), pe_lib.timestep_embedding(t, 16).ravel()  # Pearson's rho, from numpy
    assert match[(False, 1.0)] == pytest.approx(np.corrcoef(x, y)[0, 1], abs=1e-12)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: pe_lib.layout_misread_permutation(7, stored="split", read_as="split"), "even"),
        (lambda: pe_lib.layout_misread_permutation(8, stored="neox", read_as="split"), "stored"),
        (lambda: pe_lib.layout_misread_permutation(8, stored="split", read_as="gptj"), "read_as"),
        (lambda: pe_lib.timestep_convention_match(np.ones((3, 8)), [0.0, 1.0]), "one row per timestep"),
        (lambda: pe_lib.timestep_convention_match(np.ones((2, 2)), [0.0, 1.0]), "at least 4"),
        (lambda: pe_lib.timestep_convention_match(np.ones((2, 8)), [0.0, 1.0]), "constant"),
        (lambda: pe_lib.timestep_convention_match(np.ones(8), [0.0]), "table"),
        (lambda: pe_lib.timestep_convention_match(np.ones((2, 8)), [[0.0, 1.0]]), "timesteps"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_permuted_qk_moves_only_query_and_key_columns():
    rng = np.random.default_rng(0)
    blocks = [{"w_q": rng.normal(size=(2, 3, 4)), "w_k": rng.normal(size=(2, 3, 4)), "w_v": rng.normal(size=(2, 3, 4))}
              for _ in range(2)]
    perm = [2, 0, 3, 1]
    before = [{k: v.copy() for k, v in b.items()} for b in blocks]
    out = pe_lib.permuted_qk(blocks, perm)
    for b, o in zip(blocks, out, strict=True):
        for name in ("w_q", "w_k"):
            for j, src in enumerate(perm):  # column j of the result is column perm[j] of the original
                np.testing.assert_array_equal(o[name][:, :, j], b[name][:, :, src])
        assert o["w_v"] is b["w_v"]
    for b, old in zip(blocks, before, strict=True):  # the input is left as it was
        for name in old:
            np.testing.assert_array_equal(b[name], old[name])


@pytest.mark.parametrize(
    "blocks, perm, message",
    [
        ([], [0, 1], "non-empty list"),
        ({"w_q": 1}, [0, 1], "non-empty list"),
        ([{"w_q": np.ones((1, 2, 2))}], [0, 1], "'w_k'"),
        ([{"w_q": np.ones((1, 2, 2)), "w_k": np.ones((1, 2, 2))}], [0, 0], "permutation"),
        ([{"w_q": np.ones((1, 2, 2)), "w_k": np.ones((1, 2, 2))}], [0, 1, 2], "permutation"),
        ([{"w_q": np.ones((1, 2, 2)), "w_k": np.ones((1, 2, 2))}], [0.0, 1.0], "permutation"),
    ],
)
def test_permuted_qk_bad_input(blocks, perm, message):
    with pytest.raises(ValueError, match=message):
        pe_lib.permuted_qk(blocks, perm)


# ---- found by `make mutate` (each kills mutants that the tests above let live) ---------------------
def test_timestep_convention_match_of_a_4_wide_table_uses_max_period():
    # diffusers' formula with downscale_freq_shift = 0, dim = 4, max_period = 100: frequencies 100^(-i/2) = (1, 0.1),
    # [sin | cos] (no flip)
    t = np.array([0.0, 1.0, 2.0, 3.0, 5.0, 8.0])
    angles = t[:, None] * np.array([1.0, 0.1])
    table = np.concatenate([np.sin(angles), np.cos(angles)], axis=1)
    scores = pe_lib.timestep_convention_match(table, t, max_period=100.0)
    assert scores[(False, 0.0)] == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: pe_lib.timestep_convention_match(np.zeros((1, 4)), [[0.0]]),
     "timesteps must have shape (n,): one timestep per row of table, got shape (1, 1)"),
    (lambda: pe_lib.timestep_convention_match(np.zeros(4), [0.0]), "table must have shape (n, dim), got shape (4,)"),
    (lambda: pe_lib.timestep_convention_match(np.ones((2, 4)), [0.0, 1.0]),
     "table is constant: no convention can be told from it"),
    (lambda: pe_lib.permuted_qk([], [0, 1]),
     "blocks must be a non-empty list of dicts (model.params['blocks']), got list"),
    (lambda: pe_lib.permuted_qk([{"w_q": np.zeros((1, 4, 2))}], [0, 1]),
     "every block must hold the query and key weights 'w_q' and 'w_k'"),
    (lambda: pe_lib.permuted_qk([{"w_q": np.zeros((1, 4, 2)), "w_k": np.zeros((1, 4, 2))}], [0, 0]),
     "perm must be a permutation of 0 .. 1 (one index per column of a head), got array([0, 0])"),
])
def test_whole_error_messages(call, message):
    with pytest.raises(ValueError) as error:
        call()
    assert str(error.value) == message


@pytest.mark.parametrize(("call", "match"), [
    (lambda: pe_lib.layout_misread_permutation(3, stored="split", read_as="interleaved"),
     r"^d_k must be a positive even integer"),
    (lambda: pe_lib.layout_misread_permutation(4, stored="x", read_as="split"), r"^stored must be one of"),
    (lambda: pe_lib.layout_misread_permutation(4, stored="split", read_as="x"), r"^read_as must be one of"),
    (lambda: pe_lib.timestep_convention_match(np.eye(4), np.arange(4.0), max_period=float("nan")),
     r"^max_period must be a finite real number"),
])
def test_errors_name_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()
