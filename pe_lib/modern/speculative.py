r"""Speculative decoding: which positions the target model runs, and which cached keys a rejection removes.

A small draft model proposes :math:`k` tokens; the target model checks them all in one forward pass and keeps
the longest prefix it agrees with, then adds one token of its own. With the target's KV cache, one round of
transformers 5.23.0's assisted generation (``_assisted_decoding`` in ``generation/utils.py``, greedy or
sampling, batch size 1) is, for a sequence of :math:`n` tokens whose cache holds the keys of the first
:math:`n - 1` (the last token has not been run yet):

* the target runs the last token and the :math:`k` drafts at positions :math:`n - 1, n, \dots, n + k - 1`
  (the first round runs the whole prompt too: positions :math:`0 .. n + k - 1`), :math:`k + 1` predictions;
* :math:`a` drafts accepted (:math:`0 \le a \le k`) add :math:`a + 1` tokens: the drafts and the target's
  token after them;
* the keys written for the rejected drafts, positions :math:`n + a .. n + k - 1`, are cropped
  (``past_key_values.crop(-(k - a))``): the cache keeps :math:`n + a` keys, positions :math:`0 .. n + a - 1`,
  and the next round starts at position :math:`n + a` with the target's own token.

Without the crop the next round would write new keys at positions the rejected drafts already hold, and
every later query would see both. ``make reference`` checks these positions and cache lengths against every
target forward pass of a real assisted ``generate()``.

The draft model keeps a cache of its own, and it is cropped too. In the same transformers version
(``AssistedCandidateGenerator`` in ``generation/candidate_generator.py``: ``_update_past_and_masks`` with its
defaults, then ``assistant_model.generate``), a round that starts with :math:`n` tokens first crops the draft's
cache to :math:`n - 2` keys, whatever it held, then has the draft run positions :math:`n - 2` and :math:`n - 1`
in one pass and each of its first :math:`k - 1` drafts after them, one pass each (:math:`n .. n + k - 2`; the
last draft is proposed but never run through the draft model). Its cache then holds :math:`n + k - 1` keys, of
which the next round, at length :math:`n + a + 1`, keeps :math:`n + a - 1`: it crops :math:`k - a` keys,
positions :math:`n + a - 1 .. n + k - 2`, the rejected drafts that were run and one valid key before them,
which it runs again. The first round has nothing to crop and runs the whole prompt.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._validate import check_positive_int


def speculative_round(n_tokens: int, n_draft: int, n_accepted: int, *,
                      first: bool = False) -> tuple[np.ndarray, np.ndarray, int]:
    r"""One round of speculative decoding, seen from the target model's positions and cache.

    ``n_tokens`` :math:`n \ge 1`: the sequence's length before the round. ``n_draft`` :math:`k \ge 0`: drafts
    proposed. ``n_accepted`` :math:`a`, :math:`0 \le a \le k`. ``first``: the first round (nothing cached; the
    target runs the whole prompt). Returns ``(run, cropped, n_next)``: the positions the target runs, int64
    :math:`(n - 1, \dots, n + k - 1)` or :math:`(0, \dots, n + k - 1)` if ``first``; the positions whose keys
    are cropped, :math:`(n + a, \dots, n + k - 1)`; and :math:`n + a + 1`, the length after the round (the
    cache then holds :math:`n + a` keys). Source: see the module docstring.
    """
    n = check_positive_int(n_tokens, name="n_tokens")
    k = check_positive_int(n_draft, name="n_draft", minimum=0)
    if isinstance(n_accepted, bool) or not isinstance(n_accepted, numbers.Integral) or not 0 <= n_accepted <= k:
        raise ValueError(f"n_accepted must be an integer from 0 to n_draft = {k}, got {n_accepted!r}")
    if not isinstance(first, bool):
        raise ValueError(f"first must be True or False, got {first!r}")
    a = int(n_accepted)
    run = np.arange(0 if first else n - 1, n + k, dtype=np.int64)
    cropped = np.arange(n + a, n + k, dtype=np.int64)
    return run, cropped, n + a + 1


def speculative_draft_round(n_tokens: int, n_draft: int, n_accepted: int, *,
                            first: bool = False) -> tuple[np.ndarray, np.ndarray, int]:
    r"""One round of speculative decoding, seen from the draft model's positions and cache.

    ``n_tokens`` :math:`n`: the sequence's length before the round (:math:`n \ge 2` unless ``first``, when
    :math:`n \ge 1`). ``n_draft`` :math:`k \ge 1`: drafts proposed (a round with none does not run the draft).
    ``n_accepted`` :math:`a`, :math:`0 \le a \le k`. ``first``: the first round (the draft has no cache yet).
    Returns ``(run, cropped, n_kept)``: the positions the draft model runs in this round, int64
    :math:`(n - 2, \dots, n + k - 2)`, or :math:`(0, \dots, n + k - 2)` if ``first`` (its cache then holds
    :math:`n + k - 1` keys); the positions whose keys the next round crops, :math:`(n + a - 1, \dots, n + k - 2)`,
    :math:`k - a` of them; and :math:`n + a - 1`, the keys the draft's cache keeps for the next round, which
    starts at length :math:`n + a + 1` and runs positions :math:`n + a - 1` and :math:`n + a` first.
    Source: transformers 5.23.0, see the module docstring.
    """
    if not isinstance(first, bool):
        raise ValueError(f"first must be True or False, got {first!r}")
    n = check_positive_int(n_tokens, name="n_tokens", minimum=1 if first else 2)
    k = check_positive_int(n_draft, name="n_draft")
    if isinstance(n_accepted, bool) or not isinstance(n_accepted, numbers.Integral) or not 0 <= n_accepted <= k:
        raise ValueError(f"n_accepted must be an integer from 0 to n_draft = {k}, got {n_accepted!r}")
    a = int(n_accepted)
    run = np.arange(0 if first else n - 2, n + k - 1, dtype=np.int64)
    cropped = np.arange(n + a - 1, n + k - 1, dtype=np.int64)
    return run, cropped, n + a - 1
