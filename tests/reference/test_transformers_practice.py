r"""Chapter 19's functions against the code transformers 5.23.0 runs.

* :func:`pe_lib.position_ids_from_mask` and :func:`pe_lib.generation_position_ids` against the
  ``position_ids`` that ``generate()`` passes to a model at every step (caught by a forward pre-hook on
  a tiny randomly initialised ``LlamaForCausalLM``), for left and right padding;
* :func:`pe_lib.packed_position_ids`, :func:`pe_lib.packed_document_ids` and :func:`pe_lib.cu_seq_lens`
  against ``DataCollatorWithFlattening`` (with ``position_ids_start`` 0 and 2);
* :func:`pe_lib.packed_attention_mask` and :func:`pe_lib.documents_from_position_ids` against the mask
  ``create_causal_mask`` builds from packed ``position_ids`` alone (no attention mask), and against
  ``find_packed_sequence_indices``;
* :func:`pe_lib.documents_in_transformers_mask` against a whole ``LlamaForCausalLM`` forward pass on a pack
  of documents of 5, 7 and 4 tokens with restarting ``position_ids`` and no mask (eager and sdpa, train
  and eval mode, ``use_cache`` default / True / False): the pack's logits equal the documents run
  separately exactly where the function says the documents are kept apart, and are far from them
  elsewhere (the old claim, "restarting positions alone build the block-diagonal mask", fails here);
* :func:`pe_lib.cu_seq_lens_from_position_ids` against ``prepare_fa_kwargs_from_position_ids`` (the flash
  path's cut) and :func:`pe_lib.packed_labels` against the collator's ``labels``;
* :func:`pe_lib.vllm_dynamic_frequencies` (vLLM's one "dynamic" table, read at commits 50feac95 and 3cfbaf33)
  against transformers' "dynamic" module at ``factor`` x L positions (before PR 41277) and plain RoPE (after);
* :func:`pe_lib.cache_positions` against the positions a bare forward call with a cache gives a left-padded
  batch, and :func:`pe_lib.sliding_window_slots` (``"shift"``) against ``StaticSlidingWindowLayer``;
* :func:`pe_lib.alibi_key_bias` against BLOOM's ``build_alibi_tensor`` (keys counted over real tokens) and
  MPT's ``build_mpt_alibi_tensor`` (keys counted by slot), for left and right padding;
* :func:`pe_lib.prefill_chunk_bounds` and :func:`pe_lib.prefill_chunk` against what ``generate(prefill_chunk_size=C)``
  passes to each prefill call (``position_ids``, and the mask the first attention layer receives), and chunked
  prefill's first logits against one pass's;
* :func:`pe_lib.speculative_round` against every target forward pass of an assisted ``generate()`` (greedy,
  drafts of 1, 3 and 5 tokens from the target with noise on its weights): the positions run, the cache length
  before and after each round (the crop of rejected drafts), and a result equal to plain greedy decoding; and
  :func:`pe_lib.speculative_draft_round` against every forward pass of the assistant in the same runs (the
  draft model's positions and its own cache, cropped to two short of the sequence at each round's start);
* :func:`pe_lib.rope_shift` against ``LlamaRotaryEmbedding`` + ``apply_rotary_pos_emb``: keys rotated by
  transformers at positions ``m`` and moved by ``delta`` equal keys transformers rotates at ``m + delta``,
  for plain and scaled frequencies (transformers forms the angles in float32: within 4 float32 epsilons
  times 1 + the largest angle, relative to the largest key entry).

Integers are compared exactly; the masks as booleans.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import EPS32, record, relative_each, relative_to_largest
from transformers import DataCollatorWithFlattening, LlamaConfig, LlamaForCausalLM
from transformers.masking_utils import create_causal_mask, find_packed_sequence_indices
from transformers.modeling_flash_attention_utils import prepare_fa_kwargs_from_position_ids
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

import pe_lib

LENGTH_SETS = [[3, 2, 1], [5], [1, 1, 4, 2], [7, 3]]


def tiny_llama(**extra):
    settings = dict(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                    num_key_value_heads=2, max_position_embeddings=64, pad_token_id=0, bos_token_id=1,
                    eos_token_id=2) | extra
    config = LlamaConfig(**settings)
    torch.manual_seed(0)
    return LlamaForCausalLM(config).eval()


def positions_generate_passes(model, input_ids, attention_mask, n_new):
    """Every ``position_ids`` the model receives during greedy generate(), concatenated along the sequence."""
    seen = []

    def hook(module, args, kwargs):
        seen.append(kwargs["position_ids"].clone())

    handle = model.register_forward_pre_hook(hook, with_kwargs=True)
    try:
        model.generate(input_ids=input_ids, attention_mask=attention_mask, max_new_tokens=n_new, min_new_tokens=n_new,
                       do_sample=False, pad_token_id=0)
    finally:
        handle.remove()
    return torch.cat(seen, dim=-1).numpy(), seen[0].numpy()


@pytest.mark.parametrize("side", ["left", "right"])
def test_generate_position_ids(side):
    model = tiny_llama()
    lengths = [3, 6, 1, 5]
    tokens = np.random.default_rng(0).integers(3, 32, size=(4, 6))
    padded, mask = pe_lib.pad_batch(tokens, lengths, side=side, pad_id=0)
    n_new = 3
    every, prompt = positions_generate_passes(model, torch.tensor(padded), torch.tensor(mask), n_new)
    np.testing.assert_array_equal(prompt, pe_lib.position_ids_from_mask(mask))
    # the last step's new token is fed but its successor is never asked for: generate stops after n_new tokens
    np.testing.assert_array_equal(every, pe_lib.generation_position_ids(mask, n_new - 1))
    record(f"generate() position_ids, {side} padding", 0.0, 0.0, "exact (integers)")


@pytest.mark.parametrize("side", ["left", "right"])
def test_generate_warns_about_right_padding_and_generates_anyway(side):
    """Chapter 19: generate() logs a warning when the last column of the mask holds a 0, and goes on."""
    import logging

    model = tiny_llama()
    padded, mask = pe_lib.pad_batch(np.random.default_rng(1).integers(3, 32, size=(2, 5)), [5, 3], side=side,
                                    pad_id=0)
    messages = []
    handler = logging.Handler()
    handler.emit = lambda record: messages.append(record.getMessage())
    logger = logging.getLogger("transformers.generation.utils")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)  # conftest lowers transformers' verbosity to errors
    try:
        out = model.generate(input_ids=torch.tensor(padded), attention_mask=torch.tensor(mask), max_new_tokens=2,
                             min_new_tokens=2, do_sample=False, pad_token_id=0)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    warned = any("right-padding was detected" in m for m in messages)
    assert warned == (side == "right") and out.shape == (2, 7)
    record("generate() warns about right padding only", 0.0, 0.0, "warned iff right padding, generated (asserted)")


@pytest.mark.parametrize("lengths", LENGTH_SETS)
@pytest.mark.parametrize("start", [0, 2])
def test_data_collator_with_flattening(lengths, start):
    features = [{"input_ids": list(range(10 + k, 10 + k + n))} for k, n in enumerate(lengths)]
    collator = DataCollatorWithFlattening(return_tensors="np", return_flash_attn_kwargs=True, return_seq_idx=True,
                                          position_ids_start=start)
    batch = collator(features)
    np.testing.assert_array_equal(batch["position_ids"][0], pe_lib.packed_position_ids(lengths, start=start))
    np.testing.assert_array_equal(batch["seq_idx"][0], pe_lib.packed_document_ids(lengths))
    np.testing.assert_array_equal(np.asarray(batch["cu_seq_lens_q"]), pe_lib.cu_seq_lens(lengths))
    documents = [f["input_ids"] for f in features]
    np.testing.assert_array_equal(collator(features)["labels"][0], pe_lib.packed_labels(documents))
    with_labels = [{"input_ids": d, "labels": [7 * t for t in d]} for d in documents]
    np.testing.assert_array_equal(collator(with_labels)["labels"][0],
                                  pe_lib.packed_labels([[7 * t for t in d] for d in documents]))
    record("DataCollatorWithFlattening position_ids, seq_idx, cu_seq_lens", 0.0, 0.0, "exact (integers)")


@pytest.mark.parametrize("lengths", LENGTH_SETS)
def test_the_mask_transformers_builds_from_packed_positions(lengths):
    config = LlamaConfig(hidden_size=16, num_attention_heads=2, num_hidden_layers=1, vocab_size=32)
    config._attn_implementation = "eager"
    total = int(sum(lengths))
    positions = torch.tensor(pe_lib.packed_position_ids(lengths))[None]
    embeds = torch.zeros(1, total, 16)
    mask = create_causal_mask(config=config, inputs_embeds=embeds, attention_mask=None, past_key_values=None,
                              position_ids=positions)
    expected = pe_lib.packed_attention_mask(lengths)
    if len(lengths) == 1:  # a single document: transformers skips the mask or builds the plain causal one
        assert mask is None or np.array_equal(mask[0, 0].numpy() == 0, expected)
    else:
        allowed = mask[0, 0].numpy() == 0  # eager: 0 where allowed, the dtype's minimum elsewhere
        np.testing.assert_array_equal(allowed, expected)
        found = find_packed_sequence_indices(positions)[0].numpy()
        np.testing.assert_array_equal(found, pe_lib.documents_from_position_ids(positions.numpy())[0])
    # positions that run on through the pack: one document, the plain causal mask
    running = torch.arange(total)[None]
    assert find_packed_sequence_indices(running) is None
    assert not pe_lib.documents_from_position_ids(running.numpy()).any()
    record("create_causal_mask from packed position_ids", 0.0, 0.0, "exact (booleans)")


@pytest.mark.parametrize("rope_scaling", [None, {"rope_type": "linear", "factor": 4.0},
                                          {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}])
@pytest.mark.parametrize("delta", [-7, 1, 40])
def test_moving_cached_keys(rope_scaling, delta):
    params = dict(rope_scaling or {"rope_type": "default"}) | {"rope_theta": 10_000.0}
    config = LlamaConfig(hidden_size=64, num_attention_heads=2, head_dim=32, max_position_embeddings=256,
                         rope_parameters=params)
    rotary = LlamaRotaryEmbedding(config)
    keys = torch.tensor(np.random.default_rng(3).normal(size=(1, 2, 6, 32)), dtype=torch.float32)
    m = torch.tensor([[50, 51, 52, 60, 61, 90]])

    def rotated(positions):
        cos, sin = rotary(keys, positions)
        return apply_rotary_pos_emb(keys, keys, cos, sin)[1].double().numpy()

    cached = rotated(m)
    ours = pe_lib.rope_shift(cached, delta, layout="split", inv_freq=rotary.inv_freq.double().numpy())
    theirs = rotated(m + delta)
    # transformers forms the angle p * omega in float32: an error of about eps32 * theta in each rotation
    theta = float(torch.maximum(m, m + delta).max()) * float(rotary.inv_freq.max())
    record("rope_shift of transformers' cached keys vs rotating at m + delta", relative_to_largest(ours, theirs),
           4 * EPS32 * (1 + theta), "max |Δ|/max |k|, bound 4 eps32 (1 + max θ)")


@pytest.mark.parametrize("lengths", LENGTH_SETS + [[4, 2, 5]])
@pytest.mark.parametrize("start", [0, 2])
def test_the_flash_path_cut(lengths, start):
    positions = torch.tensor(pe_lib.packed_position_ids(lengths, start=start))[None]
    (cu_q, cu_k), _ = prepare_fa_kwargs_from_position_ids(positions)
    np.testing.assert_array_equal(cu_q.numpy(), pe_lib.cu_seq_lens_from_position_ids(positions.numpy()))
    np.testing.assert_array_equal(cu_k.numpy(), pe_lib.cu_seq_lens_from_position_ids(positions.numpy()))
    # a document restarting at 1, not at the minimum: the flash path does not cut there
    odd = torch.tensor([[0, 1, 2, 1, 2, 0, 1]])
    np.testing.assert_array_equal(prepare_fa_kwargs_from_position_ids(odd)[0][0].numpy(),
                                  pe_lib.cu_seq_lens_from_position_ids(odd.numpy()))
    record("flash path: cu_seq_lens from packed position_ids", 0.0, 0.0, "exact (integers)")


PACK = [5, 7, 4]


@pytest.mark.parametrize("attn", ["eager", "sdpa"])
@pytest.mark.parametrize("mode", ["train", "eval"])
@pytest.mark.parametrize("use_cache", [None, True, False])
def test_a_pack_without_a_mask_through_the_whole_model(attn, mode, use_cache):
    """The documents of a pack are kept apart in a real forward pass exactly when pe_lib says they are.

    With the model's default ``use_cache`` (the config's True), transformers 5.23.0 creates a cache before
    building the mask and skips the packed-sequence detection: the documents see each other. Planted: with
    ``documents_in_transformers_mask`` returning the documents whatever ``use_cache`` is (the old claim),
    the default and ``use_cache=True`` cases fail.
    """
    model = tiny_llama(attn_implementation=attn, num_hidden_layers=2)
    getattr(model, mode)()
    ids = torch.tensor(np.random.default_rng(0).integers(3, 32, size=(1, sum(PACK))))
    positions = pe_lib.packed_position_ids(PACK)
    starts = pe_lib.cu_seq_lens(PACK)
    alone = torch.cat([model(ids[:, a:b]).logits for a, b in zip(starts[:-1], starts[1:], strict=True)], dim=1)
    kwargs = {} if use_cache is None else {"use_cache": use_cache}
    packed = model(ids, position_ids=torch.tensor(positions)[None], **kwargs).logits
    difference = float((packed - alone).abs().max())
    runs_with = model.config.use_cache if use_cache is None else use_cache
    kept_apart = pe_lib.documents_in_transformers_mask(positions, use_cache=runs_with).max() > 0
    if kept_apart:
        record("pack without mask, use_cache=False: logits vs documents alone", difference, 16 * EPS32,
               "max |Δ logit|")
    else:
        # the documents see each other: the pack equals one causal sequence with restarting positions
        one_sequence = model(ids, position_ids=torch.tensor(positions)[None], use_cache=False,
                             attention_mask=torch.ones_like(ids)).logits
        assert difference > 1e-2, f"documents alone and the pack agree to {difference:.2g}: they were kept apart"
        record("pack without mask, default use_cache: logits vs one causal sequence",
               float((packed - one_sequence).abs().max()), 16 * EPS32, "max |Δ logit|")
        record(f"pack without mask, default use_cache ({attn}): logits vs documents alone", difference, float("inf"),
               "max |Δ logit|; asserted > 0.01 (the documents see each other)")


@pytest.mark.parametrize("factor", [2.0, 4.0])
def test_vllm_dynamic_table_against_transformers(factor):
    """vLLM's one "dynamic" table, read from its code at two commits, in transformers' terms.

    Before PR 41277 (commit 50feac95) it is transformers' "dynamic" module run at factor x L positions;
    after it (commit 3cfbaf33) the plain RoPE module's frequencies. Planted: with k = s after the fix too,
    the "after" comparison fails (relative differences 2 and 12 for factors 2 and 4).
    """
    head_dim, base, length = 64, 10_000.0, 512

    def inv_freq(params, positions):
        config = LlamaConfig(hidden_size=2 * head_dim, num_attention_heads=2, head_dim=head_dim,
                             max_position_embeddings=length, rope_parameters=params | {"rope_theta": base})
        module = LlamaRotaryEmbedding(config)
        module(torch.zeros(1, positions, head_dim), torch.arange(positions)[None])
        return module.inv_freq.double().numpy()

    table = int(length * factor)
    before, n_before = pe_lib.vllm_dynamic_frequencies(head_dim, factor, base=base, max_position_embeddings=length,
                                                       before_fix=True)
    after, n_after = pe_lib.vllm_dynamic_frequencies(head_dim, factor, base=base, max_position_embeddings=length)
    assert n_before == n_after == table
    dynamic_at_table = inv_freq({"rope_type": "dynamic", "factor": factor}, table)
    plain = inv_freq({"rope_type": "default"}, table)
    record("vLLM 'dynamic' before PR 41277 vs transformers' dynamic at s L", relative_each(before, dynamic_at_table),
           8 * EPS32, "max |Δω_i|/ω_i")
    record("vLLM 'dynamic' after PR 41277 vs transformers' plain RoPE", relative_each(after, plain), 8 * EPS32,
           "max |Δω_i|/ω_i")


def test_a_bare_forward_numbers_slots_as_cache_positions():
    """Without ``position_ids``, LlamaModel numbers its tokens by cache slot, pads included: cache_positions.

    A left-padded batch run through prefill and two decode steps with a cache, as a hand-written loop
    would, and the positions the rotary module receives caught by a hook. Planted: with
    position_ids_from_mask as the expected value (what generate() passes) the comparison fails on row 1.
    """
    model = tiny_llama()
    lengths = [5, 2]
    tokens = np.random.default_rng(1).integers(3, 32, size=(2, 5))
    padded, mask = pe_lib.pad_batch(tokens, lengths, side="left", pad_id=0)
    seen = []
    handle = model.model.rotary_emb.register_forward_pre_hook(
        lambda module, args, kwargs: seen.append(kwargs["position_ids"].clone()), with_kwargs=True)
    try:
        out = model(input_ids=torch.tensor(padded), attention_mask=torch.tensor(mask), use_cache=True)
        cache, full_mask = out.past_key_values, torch.tensor(mask)
        for _ in range(2):
            step = out.logits[:, -1:].argmax(-1)
            full_mask = torch.cat([full_mask, torch.ones(2, 1, dtype=full_mask.dtype)], dim=1)
            out = model(input_ids=step, attention_mask=full_mask, past_key_values=cache, use_cache=True)
    finally:
        handle.remove()
    used = torch.cat([s.expand(2, -1) for s in seen], dim=-1).numpy()
    np.testing.assert_array_equal(used, pe_lib.cache_positions(mask, 2))
    assert not np.array_equal(used, pe_lib.generation_position_ids(mask, 2))  # what generate() would pass
    record("bare forward with a cache: positions = cache slots", 0.0, 0.0, "exact (integers)")


@pytest.mark.parametrize("window", [1, 3, 4])
@pytest.mark.parametrize("prefill", [1, 2, 6])
def test_sliding_window_cache_slots(window, prefill):
    """transformers' StaticSlidingWindowLayer holds, slot by slot, the positions sliding_window_slots(..., "shift")
    gives: keys whose entries equal their position, a prefill of ``prefill`` tokens, then one token at a time.
    Planted: the "ring" layout as expected fails once the cache is full and not aligned."""
    from transformers.cache_utils import StaticSlidingWindowLayer

    layer = StaticSlidingWindowLayer(max_cache_len=64, sliding_window=window)

    def keys(positions):
        return torch.tensor(positions, dtype=torch.float32).reshape(1, 1, -1, 1).expand(1, 1, -1, 2).contiguous()

    n = prefill
    layer.update(keys(list(range(n))), keys(list(range(n))))
    for _ in range(9):
        layer.update(keys([n]), keys([n]))
        n += 1
        stored = layer.keys[0, 0, :, 0].numpy().astype(np.int64)[: min(n, window)]
        np.testing.assert_array_equal(stored, pe_lib.sliding_window_slots(n, window, layout="shift"))
    record("StaticSlidingWindowLayer slots vs sliding_window_slots('shift')", 0.0, 0.0, "exact (positions)")


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("num_heads", [4, 6])
def test_alibi_key_bias_against_bloom_and_mpt(side, num_heads):
    """BLOOM's build_alibi_tensor counts real tokens (alibi_key_bias "tokens"); MPT's build_mpt_alibi_tensor,
    cut to the last L keys as MptAttention does, counts slots ("slots"), with MPT's own slopes.
    Planted: swapping the two counts fails both comparisons on every padded row."""
    from transformers.models.bloom.modeling_bloom import _get_alibi_slopes, build_alibi_tensor
    from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor

    lengths, width = [3, 6, 1], 6
    mask = pe_lib.padding_mask(lengths, width, side=side)
    bloom = build_alibi_tensor(torch.tensor(mask), num_heads, torch.float32).reshape(len(lengths), num_heads, width)
    slopes = _get_alibi_slopes(num_heads, "cpu").double().numpy()
    ours = pe_lib.alibi_key_bias(mask, slopes)
    record("alibi_key_bias('tokens') vs BLOOM's build_alibi_tensor", relative_to_largest(ours, bloom.double().numpy()),
           4 * EPS32, "max |Δ|/max |bias|")
    max_seq_len = 16
    mpt = build_mpt_alibi_tensor(num_heads, max_seq_len)[:, :, max_seq_len - width:]  # (H, 1, L), the last L keys
    mpt_slopes = -mpt[:, 0, -2].double().numpy()  # the key one before the last gets -slope
    ours = pe_lib.alibi_key_bias(mask, mpt_slopes, counts="slots")
    for b in range(len(lengths)):
        record("alibi_key_bias('slots') vs MPT's build_mpt_alibi_tensor",
               relative_to_largest(ours[b], mpt[:, 0, :].double().numpy()), 4 * EPS32, "max |Δ|/max |bias|")


# ---- chunked prefill: generate(prefill_chunk_size=C) ----------------------------------------------------

def _chunked_generate(model, padded, mask, chunk_size, n_new=2):
    """What every forward call of a greedy generate() receives: (position_ids, the first layer's 4-D mask)."""
    calls = []

    def on_model(module, args, kwargs):
        calls.append({"position_ids": kwargs["position_ids"].numpy().copy()})

    def on_attention(module, args, kwargs):
        calls[-1]["mask"] = kwargs["attention_mask"][:, 0].numpy().copy()  # (batch, q, kv), 0 = allowed

    handles = [model.register_forward_pre_hook(on_model, with_kwargs=True),
               model.model.layers[0].self_attn.register_forward_pre_hook(on_attention, with_kwargs=True)]
    try:
        out = model.generate(input_ids=torch.tensor(padded), attention_mask=torch.tensor(mask), max_new_tokens=n_new,
                             min_new_tokens=n_new, do_sample=False, pad_token_id=0, prefill_chunk_size=chunk_size,
                             output_logits=True, return_dict_in_generate=True)
    finally:
        for handle in handles:
            handle.remove()
    return calls, out


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("chunk_size", [1, 3, 4, 11, 20])
def test_chunked_prefill_positions_and_mask(chunk_size, side):
    """:func:`pe_lib.prefill_chunk_bounds` and :func:`pe_lib.prefill_chunk` against every prefill call of
    ``generate(prefill_chunk_size=C)`` on a padded batch (prompts of 11, 7 and 2 tokens in 11 slots, eager
    attention): one call per chunk, the ``position_ids`` it is given, and the slots the first layer's mask lets
    each real query see (pad queries' rows are not compared: transformers fills them as it likes)."""
    model = tiny_llama(attn_implementation="eager")
    tokens = np.random.default_rng(chunk_size).integers(3, 32, size=(3, 11))
    padded, mask = pe_lib.pad_batch(tokens, [11, 7, 2], side=side, pad_id=0)
    calls, _ = _chunked_generate(model, padded, mask, chunk_size)
    bounds = pe_lib.prefill_chunk_bounds(11, chunk_size)
    prefill_calls = calls[: len(bounds) - 1]
    assert [c["position_ids"].shape[1] for c in prefill_calls] == np.diff(bounds).tolist()
    worst = 0
    for call, start, stop in zip(prefill_calls, bounds[:-1], bounds[1:], strict=True):
        positions, allowed = pe_lib.prefill_chunk(mask, int(start), int(stop))
        np.testing.assert_array_equal(call["position_ids"], positions)
        theirs = call["mask"] == 0  # (batch, q, stop): transformers' dynamic cache holds exactly the slots so far
        real = mask[:, start:stop] == 1
        worst = max(worst, int(np.sum(theirs[real] != allowed[real])))
    record("prefill_chunk vs generate(prefill_chunk_size): mask entries of real queries", worst, 0, "count")
    record("prefill_chunk vs generate(prefill_chunk_size): position_ids", 0, 0, "equal (asserted)")


@pytest.mark.parametrize("chunk_size", [1, 4, 5])
def test_chunked_prefill_gives_the_one_pass_logits(chunk_size):
    """The first generated token's logits with chunked prefill equal those of one pass over the prompt to float32
    rounding (eager and sdpa): nothing about positions or the mask changes when a prompt is cut."""
    for implementation in ("eager", "sdpa"):
        model = tiny_llama(attn_implementation=implementation)
        tokens = np.random.default_rng(7).integers(3, 32, size=(3, 11))
        padded, mask = pe_lib.pad_batch(tokens, [11, 7, 2], side="left", pad_id=0)
        _, chunked = _chunked_generate(model, padded, mask, chunk_size)
        _, whole = _chunked_generate(model, padded, mask, None)
        ours, theirs = whole.logits[0].double().numpy(), chunked.logits[0].double().numpy()  # raw, before processors
        record("chunked vs one-pass prefill: first logits", relative_to_largest(ours, theirs), 64 * EPS32,
               "max |Δ| / max |logit|, bound 64 eps32")
        np.testing.assert_array_equal(whole.sequences.numpy(), chunked.sequences.numpy())


# ---- speculative (assisted) decoding: the target's positions and its cache after a rejection ------------

@pytest.mark.parametrize("noise", [0.0, 0.1, 0.3, 1.0])
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("n_draft", [1, 3, 5])
def test_speculative_round_matches_assisted_generate(n_draft, seed, noise):
    """:func:`pe_lib.speculative_round` against every forward pass of the target in ``generate(assistant_model=...)``
    (greedy, a prompt of 6 tokens, 14 new ones, ``num_assistant_tokens`` k with a constant schedule, no confidence
    stop): the
    ``position_ids`` it runs and the length of its cache at entry, round by round, with the number of accepted
    drafts read off where the next round starts. The assistant is the target with noise on its weights, so that
    drafts are rejected as well as accepted; the result equals plain greedy decoding of the target."""
    target = tiny_llama()
    assistant = LlamaForCausalLM(target.config).eval()  # the target's weights plus noise: from all drafts
    torch.manual_seed(100 + seed)  # accepted (noise 0) to most rejected
    assistant.load_state_dict({name: w + noise * torch.randn_like(w) * w.std() if w.numel() > 1 else w
                               for name, w in target.state_dict().items()})
    assistant.generation_config.num_assistant_tokens = n_draft  # the candidate generator reads the assistant's config
    assistant.generation_config.num_assistant_tokens_schedule = "constant"
    assistant.generation_config.assistant_confidence_threshold = 0.0  # no early stop of a draft
    calls, draft_calls = [], []

    def hook(into):
        def on_forward(module, args, kwargs):
            cache = kwargs.get("past_key_values")
            into.append((kwargs["position_ids"][0].numpy().copy(), 0 if cache is None else cache.get_seq_length()))
        return on_forward

    prompt = torch.tensor(np.random.default_rng(seed).integers(3, 32, size=(1, 6)))
    handles = [target.register_forward_pre_hook(hook(calls), with_kwargs=True),
               assistant.register_forward_pre_hook(hook(draft_calls), with_kwargs=True)]
    try:
        assisted = target.generate(prompt, assistant_model=assistant, max_new_tokens=14, min_new_tokens=14,
                                   do_sample=False, pad_token_id=0)
    finally:
        for handle in handles:
            handle.remove()
    plain = target.generate(prompt, max_new_tokens=14, min_new_tokens=14, do_sample=False, pad_token_id=0)
    np.testing.assert_array_equal(assisted.numpy(), plain.numpy())
    n, accepted, rejected = 6, [], 0
    for i, (run, cached) in enumerate(calls):
        k = len(run) - (n if i == 0 else 1)  # drafts in this round
        a = int(calls[i + 1][0][0]) - n if i + 1 < len(calls) else None  # where the next round starts: n + a
        if a is None:  # the last round: its acceptance is read off the final length instead
            a = assisted.shape[1] - n - 1
        ours_run, cropped, n_next = pe_lib.speculative_round(n, k, a, first=i == 0)
        np.testing.assert_array_equal(run, ours_run)
        assert cached == (0 if i == 0 else n - 1)  # the cache holds the keys of every token but the last
        if i + 1 < len(calls):
            assert calls[i + 1][1] == n_next - 1  # after the crop: n + a keys
            assert calls[i + 1][1] == cached + len(run) - len(cropped)  # the keys cropped are the ones written last
        accepted.append(a)
        rejected += len(cropped)
        n = n_next
    assert n == assisted.shape[1]
    record("speculative_round vs assisted generate(): positions and cache lengths", 0, 0,
           "equal (asserted), every round")
    _check_draft_side(calls, draft_calls, accepted, n_prompt=6)


def _check_draft_side(calls, draft_calls, accepted, *, n_prompt):
    """:func:`pe_lib.speculative_draft_round` against the assistant's forward passes in the same ``generate()``:
    a round's first pass is the one with more than one position (the prompt, then the two tokens its cropped
    cache lacks), its drafts one position each. For every round: the positions run, the cache length at each
    pass, and the length after the crop at the next round's start."""
    rounds = []
    for run, cached in draft_calls:
        if len(run) > 1:
            rounds.append([])
        rounds[-1].append((run, cached))
    lengths = n_prompt + np.cumsum([0] + [a + 1 for a in accepted])  # the sequence's length at each round
    drafts = [len(run) - (lengths[0] if i == 0 else 1) for i, (run, _) in enumerate(calls)]  # k of each round
    assert all(k >= 1 for k in drafts[:len(rounds)]) and not any(drafts[len(rounds):])  # no drafts: no draft pass
    assert len(rounds) >= len(calls) - 1  # only the last round, one token short of the length, can have none
    for i, passes in enumerate(rounds):
        n, k, a = int(lengths[i]), drafts[i], accepted[i]
        ours_run, cropped, kept = pe_lib.speculative_draft_round(n, k, a, first=i == 0)
        np.testing.assert_array_equal(np.concatenate([run for run, _ in passes]), ours_run)
        entry = passes[0][1]
        assert entry == (0 if i == 0 else n - 2)  # cropped to all but the last two tokens before it runs
        for j, (run, cached) in enumerate(passes):  # each pass sees the keys of every earlier position run
            assert cached == int(run[0]) == entry + sum(len(r) for r, _ in passes[:j])
        if i + 1 < len(rounds):
            after_round = entry + len(ours_run)  # n + k - 1 keys
            assert rounds[i + 1][0][1] == kept == after_round - len(cropped)  # the next round's crop: k - a keys
    record("speculative_draft_round vs the assistant's passes in assisted generate()", 0, 0,
           "equal (asserted), every round and pass")
