r"""T5's relative-position buckets and ALiBi's slopes against the code in transformers (chapter 13 relies on both).

* ``pe_lib.t5_relative_bucket`` against ``T5Attention._relative_position_bucket`` (T5's own),
  both directions and a few sizes, over every relative position from
  -3000 to 3000: integers, equal.
* ``pe_lib.alibi_slopes`` against BLOOM's ``_get_alibi_slopes`` (the ALiBi paper's recipe, also for a number
  of heads that is not a power of two), 1 to 128 heads. BLOOM rounds the base :math:`2^{-8/P}` to float32
  (relative error up to :math:`\varepsilon_{32}/2`) and raises it to the power :math:`h \le P` in float32,
  which multiplies that error by up to :math:`h`: tolerance :math:`(1 + H/2)\,\varepsilon_{32}` relative.
* ``pe_lib.alibi_bias`` against ``build_alibi_tensor``: BLOOM adds ``slope * j`` for key
  ``j``, which differs from :math:`-\mathrm{slope}\,(i - j)` by a constant per query row, the same after the
  softmax (the docstring of ``build_alibi_tensor`` says so); the test checks that difference is constant
  along each row. MPT's ``build_mpt_alibi_tensor`` computes the slopes another way (the odd-numbered, then
  the even-numbered slopes of the next power of two, cut to ``H``) and gets the same ones.
* T5 under padding (chapter 19): the ``position_bias`` a ``T5EncoderModel`` layer adds is its table read at the
  buckets of slot differences, pads counted, and does not change when the mask does.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import EPS32, record
from transformers.models.bloom.modeling_bloom import _get_alibi_slopes, build_alibi_tensor
from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor
from transformers.models.t5.modeling_t5 import T5Attention

import pe_lib

RELATIVE = np.arange(-3000, 3001)


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize(("num_buckets", "max_distance"), [(32, 128), (16, 64), (64, 256), (32, 1024)])
def test_t5_buckets(bidirectional, num_buckets, max_distance):
    theirs = T5Attention._relative_position_bucket(torch.from_numpy(RELATIVE), bidirectional=bidirectional,
                                                   num_buckets=num_buckets, max_distance=max_distance).numpy()
    ours = pe_lib.t5_relative_bucket(RELATIVE, bidirectional=bidirectional, num_buckets=num_buckets,
                                     max_distance=max_distance)
    record("T5 buckets (positions -3000..3000)", float(np.count_nonzero(ours != theirs)), 0.0, "buckets that differ")


@pytest.mark.parametrize("num_heads", list(range(1, 129)))
def test_alibi_slopes_as_bloom(num_heads):
    theirs = _get_alibi_slopes(num_heads, torch.device("cpu")).double().numpy()
    ours = pe_lib.alibi_slopes(num_heads)
    record("ALiBi slopes vs BLOOM (1..128 heads)", float(np.max(np.abs(ours - theirs) / ours)),
           (1 + num_heads / 2) * EPS32, "max |Δm_h|/m_h")


@pytest.mark.parametrize("num_heads", [8, 12, 16, 32])
def test_alibi_bias_differs_from_bloom_by_a_constant_per_row(num_heads):
    n = 40
    theirs = build_alibi_tensor(torch.ones(1, n), num_heads, torch.float32).double().numpy()[:, 0, :]  # (H, n)
    ours = pe_lib.alibi_bias(n, num_heads)  # (H, n, n): -m_h |i - j|
    causal = np.tril(np.ones((n, n), dtype=bool))
    for h in range(num_heads):
        difference = np.where(causal, ours[h] - theirs[h][None, :], np.nan)  # keys j <= i only
        spread = np.nanmax(difference, axis=1) - np.nanmin(difference, axis=1)
        # BLOOM's slope * j is float32: each entry off by up to eps32 * slope * n / 2, so 2 eps32 n bounds the spread
        record("ALiBi bias vs BLOOM: spread of the difference along a row", float(spread.max()), 2 * EPS32 * n,
               "max over rows, float32 rounding only")


@pytest.mark.parametrize("num_heads", [1, 4, 8, 12, 16, 24, 32, 48, 100])
def test_alibi_slopes_as_mpt(num_heads):
    theirs = -build_mpt_alibi_tensor(num_heads, 2).double().numpy()[:, 0, 0]  # the bias at offset -1: the slopes
    ours = pe_lib.alibi_slopes(num_heads)
    record("ALiBi slopes vs MPT", float(np.max(np.abs(ours - theirs) / ours)), EPS32, "max |Δm_h|/m_h")


@pytest.mark.parametrize("rows", [[[1, 1, 1, 0, 0, 0, 1], [1] * 7], [[0, 0, 1, 1, 1, 1, 1], [1, 0, 1, 0, 1, 0, 1]]],
                         ids=["right padding then new tokens", "left padding, pads between"])
def test_t5_bias_counts_slots_whatever_the_mask(rows):
    """Chapter 19: T5's relative bias is a function of slot differences only. The first layer of a tiny
    ``T5EncoderModel`` returns the ``position_bias`` it adds to the scores; for a batch with pads anywhere it
    equals the layer's bias table read at ``t5_relative_bucket(j - i)`` for slots ``i, j``, and the same bias
    comes back with no mask at all: the pads are counted in the distance, as MPT's ALiBi counts them.
    Planted: the distance counted over real tokens of the mask (``pe_lib.position_ids_from_mask``) fails."""
    from transformers import T5Config, T5EncoderModel

    config = T5Config(vocab_size=32, d_model=16, d_kv=4, d_ff=32, num_layers=1, num_heads=4,
                      relative_attention_num_buckets=8, relative_attention_max_distance=16)
    torch.manual_seed(0)
    model = T5EncoderModel(config).eval()
    attention = model.encoder.block[0].layer[0].SelfAttention
    seen = []
    handle = attention.register_forward_hook(lambda module, args, out: seen.append(out[1].detach().clone()))
    mask = torch.tensor(rows)
    ids = torch.randint(3, 32, mask.shape, generator=torch.Generator().manual_seed(1))
    try:
        model(input_ids=ids, attention_mask=mask)
        model(input_ids=ids)
    finally:
        handle.remove()
    with_mask, without = (bias.double().numpy() for bias in seen)
    np.testing.assert_array_equal(with_mask, without)  # the mask is applied apart; the bias never reads it
    slots = np.arange(mask.shape[1])
    counted = slots  # planted variant: pe_lib.position_ids_from_mask(mask.numpy())[row]
    buckets = pe_lib.t5_relative_bucket(counted[None, :] - counted[:, None], bidirectional=True, num_buckets=8,
                                        max_distance=16)
    table = attention.relative_attention_bias.weight.detach().double().numpy()  # (buckets, heads)
    ours = np.moveaxis(table[buckets], -1, 0)[None]  # (1, heads, n, n)
    record("T5 position_bias under padding vs the bias of slot differences", float(np.max(np.abs(ours - with_mask))),
           0.0, "max |Δ| (the same table entries)")
