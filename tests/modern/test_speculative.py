"""Speculative decoding: the target runs the last token and the drafts; the keys of rejected drafts are cropped."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pe_lib


def test_a_round_by_hand():
    # 10 tokens (keys of positions 0..8 cached), 4 drafts, 1 accepted: the target runs positions 9..13, keeps the
    # draft at 10 and adds its own token at 11; the keys written at 11, 12, 13 belong to rejected drafts
    run, cropped, n_next = pe_lib.speculative_round(10, 4, 1)
    assert run.tolist() == [9, 10, 11, 12, 13] and cropped.tolist() == [11, 12, 13] and n_next == 12
    # the first round runs the prompt as well
    run, cropped, n_next = pe_lib.speculative_round(3, 2, 2, first=True)
    assert run.tolist() == [0, 1, 2, 3, 4] and cropped.tolist() == [] and n_next == 6
    # no drafts: plain decoding, one token per round
    run, cropped, n_next = pe_lib.speculative_round(7, 0, 0)
    assert run.tolist() == [6] and cropped.tolist() == [] and n_next == 8


@given(n=st.integers(1, 50), k=st.integers(0, 8), data=st.data())
def test_the_cache_after_a_round_holds_every_token_but_the_last(n, k, data):
    a = data.draw(st.integers(0, k))
    run, cropped, n_next = pe_lib.speculative_round(n, k, a)
    cache_after = (n - 1) + len(run) - len(cropped)  # keys before + keys written - keys cropped
    assert cache_after == n_next - 1 == n + a
    assert set(cropped.tolist()) <= set(run.tolist()) and (len(cropped) == 0 or cropped.min() == n + a)
    assert run.tolist() == list(range(n - 1, n + k)) and len(run) == k + 1  # k + 1 predictions to check k drafts
    # the next round starts where the crop left off: its first position is n + a, no position is skipped or reused
    assert pe_lib.speculative_round(n_next, 1, 0)[0][0] == n + a


@pytest.mark.parametrize(("args", "kwargs", "match"), [
    ((0, 1, 0), {}, r"n_tokens must be an integer >= 1, got 0"),
    ((5, -1, 0), {}, r"n_draft must be an integer >= 0, got -1"),
    ((5, 2, 3), {}, r"n_accepted must be an integer from 0 to n_draft = 2, got 3"),
    ((5, 2, -1), {}, r"n_accepted must be an integer from 0 to n_draft = 2, got -1"),
    ((5, 2, True), {}, r"n_accepted must be an integer from 0 to n_draft = 2, got True"),
    ((5, 2, 1.0), {}, r"got 1.0"),
    ((5, 2, 1), {"first": 1}, r"first must be True or False, got 1"),
])
def test_bad_input(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        pe_lib.speculative_round(*args, **kwargs)


# ---- the draft model's side -----------------------------------------------------------------------------

def test_a_draft_round_by_hand():
    # 10 tokens, 4 drafts, 1 accepted: the draft's cache was cropped to 8 keys (positions 0..7); it runs 8 and 9 in
    # one pass, then drafts 1..3 at 10, 11, 12 (draft 4, at 13, is never run); cache 13 keys, positions 0..12. The
    # next round starts at 12 tokens and keeps 10 keys: it crops 10, 11, 12 (k - a = 3 keys, the first of them the
    # accepted draft at 10, run again)
    run, cropped, kept = pe_lib.speculative_draft_round(10, 4, 1)
    assert run.tolist() == [8, 9, 10, 11, 12] and cropped.tolist() == [10, 11, 12] and kept == 10
    # the first round runs the prompt; all drafts accepted: nothing cropped, the two tokens not in the cache are
    # the last draft and the target's own token
    run, cropped, kept = pe_lib.speculative_draft_round(3, 2, 2, first=True)
    assert run.tolist() == [0, 1, 2, 3] and cropped.tolist() == [] and kept == 4
    # one draft, rejected: the draft ran 5 and 6 (n - 2, n - 1) and nothing else; the next round crops position 6
    run, cropped, kept = pe_lib.speculative_draft_round(7, 1, 0)
    assert run.tolist() == [5, 6] and cropped.tolist() == [6] and kept == 6


@given(n=st.integers(2, 50), k=st.integers(1, 8), data=st.data())
def test_the_draft_cache_enters_every_round_two_short(n, k, data):
    a = data.draw(st.integers(0, k))
    run, cropped, kept = pe_lib.speculative_draft_round(n, k, a)
    held = (n - 2) + len(run)  # keys at entry + keys written
    assert held == n + k - 1 and run[-1] == n + k - 2  # the last draft is proposed, never run by the draft
    assert held - len(cropped) == kept == (n + a + 1) - 2  # the next round enters two short of its length
    assert len(cropped) == k - a == len(pe_lib.speculative_round(n, k, a)[1])  # as many as the target crops
    nxt = pe_lib.speculative_draft_round(n + a + 1, 1, 0)[0]
    assert nxt[0] == kept  # the next round runs from the first position it cropped: no gap, no overlap


@pytest.mark.parametrize(("args", "kwargs", "match"), [
    ((1, 1, 0), {}, r"n_tokens must be an integer >= 2, got 1"),
    ((0, 1, 0), {"first": True}, r"n_tokens must be an integer >= 1, got 0"),
    ((5, 0, 0), {}, r"n_draft must be an integer >= 1, got 0"),
    ((5, 2, 3), {}, r"n_accepted must be an integer from 0 to n_draft = 2, got 3"),
    ((5, 2, -1), {}, r"got -1"),
    ((5, 2, False), {}, r"got False"),
    ((5, 2, 1), {"first": 0}, r"first must be True or False, got 0"),
])
def test_draft_bad_input(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        pe_lib.speculative_draft_round(*args, **kwargs)
