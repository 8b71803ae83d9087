"""``pe_lib.context_shift`` against llama.cpp's context shift, run (chapter 19).

The engine side is what llama.cpp's server does when a slot's context is full (``update_slots``): remove the
cached tokens ``[n_keep, n_keep + n_discard)`` with ``llama_memory_seq_rm`` and move the rest back with
``llama_memory_seq_add(..., -n_discard)``, which makes the next decode turn every moved key by
``-n_discard`` (llama.cpp's K-shift); then it decodes the next token. pe_lib says which tokens survive and at
which positions they then sit. The check: the next token's logits after the engine's shift equal those of a
fresh evaluation of the surviving tokens at pe_lib's positions, and differ clearly from those of a wrong
account of the positions (the hole left open; the tail moved back one place too few).

The model has one layer, so that a cached key depends on nothing but its token and its position: the state
after the shift can then be rebuilt from scratch exactly. With two layers it cannot, and the last test
measures by how much: the moved tokens' deeper keys were computed while the dropped tokens were in view.
"""

from __future__ import annotations

import llama_cpp
import numpy as np
import pytest
from conftest import record, relative_to_largest

import pe_lib

N_CTX = 32
EPS32 = float(np.finfo(np.float32).eps)
# The keys after the shift are rotated twice (at p, then by -m) where the fresh ones are rotated once (at p - m):
# float32 rounding of a few rotations, carried through one attention layer and the output projection.
TOLERANCE = 64 * EPS32
# A wrong account moves some keys by a whole position or more: it must change the logits by a hundred times the
# tolerance at least (the table at the end prints by how much it does).
CLEARLY = 100 * TOLERANCE

# (tokens in the full cache, n_keep, n_discard): n_keep -1 keeps the whole prompt, n_discard 0 is the default;
# (31, 4, 26) asks for all n_left = 26 tokens after the 5 kept, which pe_lib clamps to 25 as PR 24786 does
CASES = [(31, 4, 0), (31, 0, 0), (31, 10, 0), (31, 4, 3), (31, 20, 0), (31, -1, 0), (31, 4, 7), (31, 4, 26)]


def _shift_plan(n_tokens: int, n_keep: int, n_discard: int):
    """pe_lib's account: new positions (-1 dropped), the k kept in front, the m dropped after them."""
    new_positions, delta = pe_lib.context_shift(n_tokens, N_CTX, n_keep, n_discard=n_discard)
    dropped = np.flatnonzero(new_positions < 0)
    k, m = int(dropped[0]), -delta
    assert dropped.size == m and np.array_equal(dropped, np.arange(k, k + m)), "pe_lib drops one block"
    return new_positions, k, m


def _tokens(n_tokens: int, seed: int) -> tuple[np.ndarray, int]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, size=n_tokens), int(rng.integers(0, 256))


def _after_engine_shift(engine, tokens, next_token, k: int, m: int):
    """Fill the cache, shift it as llama.cpp's server does, decode the next token: (its logits, cache positions)."""
    n = tokens.size
    engine.clear()
    engine.decode(tokens, np.arange(n))
    assert llama_cpp.llama_memory_can_shift(engine.memory), "this cache cannot be shifted"
    assert llama_cpp.llama_memory_seq_rm(engine.memory, 0, k, k + m), "llama_memory_seq_rm refused"
    llama_cpp.llama_memory_seq_add(engine.memory, 0, k + m, n, -m)
    cached = engine.positions()
    return engine.decode([next_token], [cached[1] + 1]), cached


def _fresh(engine, tokens, positions, next_token) -> np.ndarray:
    """The next token's logits with ``tokens`` cached afresh at ``positions`` (increasing, gaps allowed).

    llama.cpp decodes only consecutive positions; a gap is filled with a token that is removed before the
    next token is decoded. With one layer, the keys and values of the others do not depend on it.
    """
    positions = np.asarray(positions)
    full = np.arange(positions[0], positions[-1] + 1)
    filled = np.zeros(full.size, dtype=np.int64)
    filled[positions - positions[0]] = tokens
    engine.clear()
    engine.decode(filled, full)
    for gap in np.setdiff1d(full, positions):
        assert llama_cpp.llama_memory_seq_rm(engine.memory, 0, int(gap), int(gap) + 1)
    return engine.decode([next_token], [positions[-1] + 1])


@pytest.mark.parametrize("n_tokens, n_keep, n_discard", CASES)
def test_context_shift_matches_a_fresh_run_at_pe_libs_positions(engine_factory, n_tokens, n_keep, n_discard):
    engine = engine_factory(1)
    new_positions, k, m = _shift_plan(n_tokens, n_keep, n_discard)
    kept = new_positions >= 0
    for seed in range(3):
        tokens, next_token = _tokens(n_tokens, seed)
        shifted, cached = _after_engine_shift(engine, tokens, next_token, k, m)
        # the positions the engine holds after the shift: pe_lib's, contiguous from 0
        assert cached == (int(new_positions[kept].min()), int(new_positions[kept].max())), cached

        right = _fresh(engine, tokens[kept], new_positions[kept], next_token)
        record("shifted cache vs fresh run at pe_lib's positions", relative_to_largest(right, shifted), TOLERANCE,
               "max |logit difference| / max |logit|")

        # wrong account 1: the hole is left open (the survivors keep their text positions, the next token is n)
        hole = _fresh(engine, tokens[kept], np.flatnonzero(kept), next_token)
        record("shifted cache vs the hole left open", relative_to_largest(right, hole), CLEARLY,
               "max |logit difference| / max |logit|", at_least=True)

        # wrong account 2: the tail moved back by n_discard - 1, one place too few
        short = np.where(np.arange(n_tokens) < k, new_positions, new_positions + 1)[kept]
        off = _fresh(engine, tokens[kept], short, next_token)
        record("shifted cache vs a tail moved one place too few", relative_to_largest(right, off), CLEARLY,
               "max |logit difference| / max |logit|", at_least=True)


def test_two_layers_keep_a_trace_of_the_dropped_tokens(engine_factory):
    """With two layers the shifted cache is not a fresh run of the survivors: their second-layer keys were
    computed with the dropped tokens in view. (A fact about the engine the one-layer check above rules out.)"""
    engine = engine_factory(2)
    new_positions, k, m = _shift_plan(31, 4, 0)
    kept = new_positions >= 0
    tokens, next_token = _tokens(31, 0)
    shifted, cached = _after_engine_shift(engine, tokens, next_token, k, m)
    assert cached == (0, int(new_positions.max()))
    engine.clear()
    right = engine.decode(np.append(tokens[kept], next_token), np.arange(kept.sum() + 1))
    record("2 layers: shifted cache vs fresh run of the survivors", relative_to_largest(right, shifted), CLEARLY,
           "max |logit difference| / max |logit|", at_least=True)
