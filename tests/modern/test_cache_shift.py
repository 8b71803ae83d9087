"""Moving cached RoPE keys: the same as rotating from scratch at the new position (pe_lib.rope)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import bases, d_models, offsets

import pe_lib


@given(d_models, bases, offsets, st.sampled_from(["interleaved", "split"]))
def test_shift_equals_rotating_at_the_new_position(d, base, delta, layout):
    x = np.random.default_rng(d).normal(size=(2, 5, d))  # two heads, five cached keys
    positions = np.array([0.0, 1.0, 7.0, 30.0, 100.0])
    cached = pe_lib.rope(x, positions, base=base, layout=layout)
    moved = pe_lib.rope_shift(cached, delta, base=base, layout=layout)
    np.testing.assert_allclose(moved, pe_lib.rope(x, positions + delta, base=base, layout=layout), atol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(moved, axis=-1), np.linalg.norm(x, axis=-1))  # a rotation


def test_hand_worked_pair_and_own_frequencies():
    # one pair at frequency 1: (1, 0) turned by 90 degrees is (0, 1)
    np.testing.assert_allclose(pe_lib.rope_shift([1.0, 0.0], np.pi / 2), [0.0, 1.0], atol=1e-15)
    inv_freq = np.array([0.5, 0.25])  # a scaled model's own frequencies
    got = pe_lib.rope_shift([1.0, 0.0, 0.0, 1.0], 2.0, inv_freq=inv_freq, layout="split")
    # split pairs: (x0, x2) = (1, 0) turns by 1 rad, (x1, x3) = (0, 1) turns by 0.5 rad
    np.testing.assert_allclose(got, [np.cos(1.0), -np.sin(0.5), np.sin(1.0), np.cos(0.5)], atol=1e-15)
    keys = np.random.default_rng(1).normal(size=(3, 8))
    np.testing.assert_allclose(pe_lib.rope_shift(pe_lib.rope_shift(keys, 5.0), -5.0), keys, atol=1e-12)
    np.testing.assert_array_equal(pe_lib.rope_shift(keys, 0.0), keys)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: pe_lib.rope_shift(np.ones(3), 1), "even integer"),
        (lambda: pe_lib.rope_shift(np.ones(4), np.inf), "delta must be a finite real number"),
        (lambda: pe_lib.rope_shift(np.ones(4), "1"), "delta must be a finite real number"),
        (lambda: pe_lib.rope_shift(np.full(4, np.nan), 1), "must be finite"),
        (lambda: pe_lib.rope_shift(np.ones(4), 1, layout="neox"), "layout must be one of"),
        (lambda: pe_lib.rope_shift(np.ones(4), 1, base=1.0), "greater than 1"),
        (lambda: pe_lib.rope_shift(np.ones(4), 1, inv_freq=[1.0]), r"one frequency per pair: 2 .* got shape \(1,\)"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ---- found by `make mutate` (each kills mutants that the tests above let live) ---------------------
def test_the_default_base_is_10000():
    # interleaved, d = 4: pair 1 = dimensions (2, 3) turns at 10000^(-1/2) = 0.01, by 10 rad over 1000 positions
    out = pe_lib.rope_shift(np.array([0.0, 0.0, 1.0, 0.0]), 1000)
    np.testing.assert_allclose(out, [0.0, 0.0, np.cos(10.0), np.sin(10.0)], rtol=0, atol=1e-12)


@pytest.mark.parametrize(("keys", "kwargs", "message"), [
    (np.float64(1.0), {}, "keys must have shape (..., d), got shape ()"),
    (np.zeros(3), {}, "the last axis of keys (the head dimension d) must be a positive even integer (each "
                      "frequency fills a sin/cos pair), got 3; try 4"),
    (np.zeros(4), {"inv_freq": [[1.0, 1.0]]}, "inv_freq must be 1-D, got shape (1, 2)"),
])
def test_whole_error_messages(keys, kwargs, message):
    with pytest.raises(ValueError) as error:
        pe_lib.rope_shift(keys, 1, **kwargs)
    assert str(error.value) == message


# ---- the roles of the new tokens after a stale cache (issue 29) -------------------------------------
def loop_roles(n_cached, length, delta, lookback):
    """Independent re-implementation: where does each new token's target sit, and what else looks like it?"""
    roles = []
    apparent = {j: j + delta for j in range(n_cached)}  # cached token j appears at j + delta
    for i in range(length):
        target = i - lookback
        if i < n_cached or target < 0:
            roles.append(3)
        elif target < n_cached:
            roles.append(0)
        elif any(pos == target for j, pos in apparent.items() if delta):
            roles.append(1)
        else:
            roles.append(2)
    return roles


@pytest.mark.parametrize("delta", [0, 1, 2, 4, 8, 16, 40])
@pytest.mark.parametrize(("n_cached", "length", "lookback"), [(16, 32, 3), (5, 12, 1), (3, 20, 7)])
def test_stale_cache_roles_against_a_loop(n_cached, length, delta, lookback):
    got = pe_lib.stale_cache_roles(n_cached, length, delta, lookback)
    assert got.tolist() == loop_roles(n_cached, length, delta, lookback)
    assert got.dtype == np.int64


def test_stale_cache_roles_by_hand():
    # chapter 19's case: 16 cached, 32 tokens, look back 3
    roles = pe_lib.stale_cache_roles(16, 32, 8, 3)
    assert [int((roles == r).sum()) for r in range(4)] == [3, 8, 5, 16]
    assert pe_lib.stale_cache_roles(16, 32, 1, 3)[16:20].tolist() == [0, 0, 0, 1]
    assert len(pe_lib.STALE_ROLES) == 4


@pytest.mark.parametrize(("args", "message"), [
    ((16, 16, 1, 3), "n_cached must be below length"),
    ((0, 16, 1, 3), "n_cached must be an integer >= 1"),
    ((4, 16, -1, 3), "delta must be an integer >= 0"),
    ((4, 16, 1, 0), "lookback must be an integer >= 1"),
    ((4, 16.0, 1, 2), "length must be an integer"),
])
def test_stale_cache_roles_bad_input(args, message):
    with pytest.raises(ValueError, match=message):
        pe_lib.stale_cache_roles(*args)


# ---- sliding-window caches: slots are not positions (issue 29) -------------------------------------
def simulate(n_tokens, window, layout):
    """Independent re-implementation: write tokens one at a time into a list of W slots."""
    slots = []
    for p in range(n_tokens):
        if len(slots) < window:
            slots.append(p)
        elif layout == "ring":
            slots[p % window] = p
        else:
            slots = slots[1:] + [p]
    return slots


@given(st.integers(1, 40), st.integers(1, 9), st.sampled_from(["ring", "shift"]))
def test_sliding_window_slots_against_writing_tokens_one_by_one(n_tokens, window, layout):
    got = pe_lib.sliding_window_slots(n_tokens, window, layout=layout)
    assert got.tolist() == simulate(n_tokens, window, layout)
    assert got.dtype == np.int64


def test_sliding_window_slots_by_hand():
    assert pe_lib.sliding_window_slots(11, 4).tolist() == [8, 9, 10, 7]  # 11 tokens, window 4, p mod 4
    assert pe_lib.sliding_window_slots(11, 4, layout="shift").tolist() == [7, 8, 9, 10]
    assert pe_lib.sliding_window_slots(3, 4).tolist() == [0, 1, 2]
    assert pe_lib.SLIDING_LAYOUTS == ("ring", "shift")
    with pytest.raises(ValueError, match="layout must be one of"):
        pe_lib.sliding_window_slots(5, 2, layout="paged")
    with pytest.raises(ValueError, match="window must be an integer >= 1"):
        pe_lib.sliding_window_slots(5, 0)


# ---- prefix caching: chained block hashes (issue 29) ------------------------------------------------
def chained_hits(cached, tokens, block_size):
    """Independent re-implementation of vLLM's scheme: chain-hash full blocks, count leading hits."""
    import hashlib

    def hashes(ids):
        out, parent = [], b"none"
        for k in range(len(ids) // block_size):
            parent = hashlib.sha256(parent + repr(tuple(ids[k * block_size:(k + 1) * block_size])).encode()).digest()
            out.append(parent)
        return out

    known, hits = set(hashes(list(cached))), 0
    for h in hashes(list(tokens)):
        if h not in known:
            break
        hits += block_size
    return hits


@given(st.lists(st.integers(0, 3), max_size=30), st.lists(st.integers(0, 3), max_size=30), st.integers(1, 5))
def test_prefix_cache_hit_against_chained_hashes(cached, tokens, block_size):
    assert pe_lib.prefix_cache_hit(np.array(cached, dtype=int), np.array(tokens, dtype=int), block_size) == \
        chained_hits(cached, tokens, block_size)


def test_prefix_cache_hit_by_hand():
    system = list(range(100, 140))  # 40 tokens: two full blocks of 16
    assert pe_lib.prefix_cache_hit(system + [1, 2, 3], system + [7, 8], 16) == 32
    assert pe_lib.prefix_cache_hit([5] + system, system, 16) == 0  # same tokens one position later: a miss
    assert pe_lib.prefix_cache_hit([1, 2, 3, 4], [1, 9, 3, 4], 2) == 0  # a block after a difference never counts
    assert pe_lib.prefix_cache_hit([1, 2], [1, 2, 3], 4) == 0  # no full block
    with pytest.raises(ValueError, match="tokens must be a 1-D sequence of integer token ids"):
        pe_lib.prefix_cache_hit([1, 2], [1.0, 2.0], 2)
    with pytest.raises(ValueError, match="cached_tokens must be a 1-D"):
        pe_lib.prefix_cache_hit([[1, 2]], [1, 2], 2)
    with pytest.raises(ValueError, match="block_size must be an integer >= 1"):
        pe_lib.prefix_cache_hit([1, 2], [1, 2], 0)


# ---- llama.cpp's context shift (issue 29) -----------------------------------------------------------
def shifted_by_hand(n_tokens, n_ctx, n_keep, n_discard, add_bos):
    """Independent re-implementation: delete the discarded tokens from a list; a token's new position is its index."""
    keep = n_tokens if n_keep == -1 else n_keep
    keep = min(n_ctx - 4, keep + (1 if add_bos else 0))
    discard = n_discard or (n_tokens - keep) // 2
    cache = list(range(n_tokens))
    while keep + discard >= n_tokens:  # llama.cpp PR 24786 (commit 0c1e57098): the newest token always stays
        discard -= 1
    del cache[keep:keep + discard]
    return [cache.index(p) if p in cache else -1 for p in range(n_tokens)], -discard


@pytest.mark.parametrize(("n_ctx", "n_keep", "n_discard", "add_bos"),
                         [(16, 0, 0, True), (16, 4, 0, False), (16, -1, 0, True), (32, 3, 5, True), (9, 2, 0, False),
                          (16, 4, 10, True), (16, 4, 9, True), (16, 4, 40, False)])
def test_context_shift_against_a_list(n_ctx, n_keep, n_discard, add_bos):
    n_tokens = n_ctx - 1  # the shift happens when n_tokens + 1 >= n_ctx
    new, delta = pe_lib.context_shift(n_tokens, n_ctx, n_keep, n_discard=n_discard, add_bos=add_bos)
    expected, expected_delta = shifted_by_hand(n_tokens, n_ctx, n_keep, n_discard, add_bos)
    assert new.tolist() == expected and delta == expected_delta
    assert new.dtype == np.int64


def test_context_shift_by_hand_and_with_rope_shift():
    # 15 tokens, n_ctx 16, n_keep 4 + BOS = 5 kept, (15 - 5) // 2 = 5 dropped, the last 5 move back by 5
    new, delta = pe_lib.context_shift(15, 16, 4)
    assert new.tolist() == [0, 1, 2, 3, 4, -1, -1, -1, -1, -1, 5, 6, 7, 8, 9] and delta == -5
    # the moved keys, turned by rope_shift(delta), are the keys rotated at their new positions
    keys = np.random.default_rng(0).normal(size=(15, 8))
    moved = new >= 0
    cached = pe_lib.rope(keys, np.arange(15.0))
    turned = np.where((np.arange(15) >= 10)[:, None], pe_lib.rope_shift(cached, delta), cached)
    np.testing.assert_allclose(turned[moved], pe_lib.rope(keys[moved], new[moved].astype(float)), atol=1e-12)


def test_context_shift_never_drops_the_newest_token():
    # llama.cpp PR 24786 (server-context.cpp at commit 0c1e57098, the one make reference-llamacpp runs): n_discard
    # is clamped to n_left - 1. 15 tokens, 4 + BOS = 5 kept, n_left = 10: asking for 10 (or 40) drops 9, and the
    # newest token, position 14, moves back by 9 to position 5, right after the kept ones
    for asked in (10, 40):
        new, delta = pe_lib.context_shift(15, 16, 4, n_discard=asked)
        assert new.tolist() == [0, 1, 2, 3, 4] + [-1] * 9 + [5] and delta == -9
    new, delta = pe_lib.context_shift(15, 16, 4, n_discard=9)  # below the clamp: taken as given
    assert new.tolist() == [0, 1, 2, 3, 4] + [-1] * 9 + [5] and delta == -9
    new, delta = pe_lib.context_shift(15, 16, 4, n_discard=8)
    assert new.tolist() == [0, 1, 2, 3, 4] + [-1] * 8 + [5, 6] and delta == -8


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(n_tokens=10, n_ctx=16, n_keep=4), "no context shift"),
    (dict(n_tokens=15, n_ctx=16, n_keep=-2), "n_keep must be an integer >= -1"),
    (dict(n_tokens=15, n_ctx=16, n_keep=True), "n_keep must be an integer >= -1"),
    (dict(n_tokens=15, n_ctx=4, n_keep=1), "n_ctx must be an integer >= 5"),
    (dict(n_tokens=15, n_ctx=16, n_keep=1, n_discard=-1), "n_discard must be an integer >= 0"),
    (dict(n_tokens=15, n_ctx=16, n_keep=1, add_bos=1), "add_bos must be True or False"),
])
def test_context_shift_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        pe_lib.context_shift(**kwargs)


def test_sink_cache_positions_by_hand():
    # 20 tokens, 4 sinks and 8 recent: tokens 0-3 and 12-19 stay, rotated at 0..11; the next query is at 12
    kept, positions = pe_lib.sink_cache_positions(20, 4, 8)
    assert kept.tolist() == [0, 1, 2, 3, 12, 13, 14, 15, 16, 17, 18, 19]
    assert positions.tolist() == list(range(12)) and kept.dtype == positions.dtype == np.int64
    # nothing is evicted while the cache has room, up to s + r tokens
    for n in (1, 11, 12):
        kept, positions = pe_lib.sink_cache_positions(n, 4, 8)
        assert kept.tolist() == positions.tolist() == list(range(n))
    # no sinks: a plain window of the r most recent
    assert pe_lib.sink_cache_positions(10, 0, 3)[0].tolist() == [7, 8, 9]


@pytest.mark.parametrize("n", [5, 13, 40, 517, 1000])
def test_sink_cache_positions_against_start_recent_slicing(n):
    """StartRecentKVCache.__call__ (streaming-llm d729b3ff) slices [0, s) and [n - r, n) once n > s + r; the
    offsets the model meets never exceed the cache size."""
    s, r = 4, 512
    kept, positions = pe_lib.sink_cache_positions(n, s, r)
    cache = list(range(n)) if n <= s + r else list(range(n))[:s] + list(range(n))[n - r:]
    assert kept.tolist() == cache and positions.max() < s + r


def sink_cache_by_steps(n, sinks, window, prompt):
    """Independent re-enactment of transformers 4.52.4's SinkCache.update, one call per forward: a list of
    [text position, rotated at]. Each call's tokens get positions from the cache length; a full cache keeps its
    sinks and its last window - sinks - k entries, turned back by k, then appends the k new ones."""
    cache = []
    calls = [list(range(prompt))] + [[t] for t in range(prompt, n)]
    for new in calls:
        k, length = len(new), len(cache)
        entries = [[t, length + i] for i, t in enumerate(new)]
        if not cache or k + length < window:
            cache += entries
        else:
            moved = [[t, p - k] for t, p in cache[-window + sinks + k:]]
            cache = cache[:sinks] + moved + entries
    return [t for t, _ in cache], [p for _, p in cache]


@pytest.mark.parametrize(("n", "sinks", "recent"), [(5, 3, 7), (9, 3, 7), (10, 3, 7), (11, 3, 7), (13, 3, 7),
                                                    (17, 3, 7), (40, 4, 8), (20, 0, 8), (12, 4, 2), (100, 4, 32)])
def test_sink_cache_positions_transformers_against_its_steps(n, sinks, recent):
    kept, positions = pe_lib.sink_cache_positions(n, sinks, recent, engine="transformers")
    tokens, rotated = sink_cache_by_steps(n, sinks, sinks + recent, prompt=min(n, 2))
    assert kept.tolist() == tokens and positions.tolist() == rotated
    assert kept.tolist() == pe_lib.sink_cache_positions(n, sinks, recent)[0].tolist()  # same tokens as the authors'


def test_sink_cache_positions_transformers_by_hand():
    # window 10 with 3 sinks, 17 tokens: 0-2 and 10-16 kept (as in StreamingLLM with r = 7), but the recent ones
    # are rotated at 4..10, one place later than StreamingLLM's 3..9: position 3 is left empty
    kept, positions = pe_lib.sink_cache_positions(17, 3, 7, engine="transformers")
    assert kept.tolist() == [0, 1, 2, 10, 11, 12, 13, 14, 15, 16]
    assert positions.tolist() == [0, 1, 2, 4, 5, 6, 7, 8, 9, 10]
    # the step that fills the window drops nothing but still turns tokens 3-8 back by one: 3 sits on 2
    assert pe_lib.sink_cache_positions(10, 3, 7, engine="transformers")[1].tolist() == [0, 1, 2, 2, 3, 4, 5, 6, 7, 9]
    with pytest.raises(ValueError, match="engine"):
        pe_lib.sink_cache_positions(17, 3, 7, engine="hf")
    # one place besides the sinks: SinkCache's slice [-1 + 1:] is [0:] and the cache never drops anything
    assert len(sink_cache_by_steps(12, 4, 5, prompt=2)[0]) > 5
    with pytest.raises(ValueError, match="recent_size >= 2"):
        pe_lib.sink_cache_positions(12, 4, 1, engine="transformers")


def test_sink_cache_positions_rejects_bad_sizes():
    with pytest.raises(ValueError, match="recent_size must be an integer >= 1, got 0"):
        pe_lib.sink_cache_positions(10, 4, 0)
    with pytest.raises(ValueError, match="start_size"):
        pe_lib.sink_cache_positions(10, -1, 4)
    with pytest.raises(ValueError, match="n_tokens"):
        pe_lib.sink_cache_positions(0)
