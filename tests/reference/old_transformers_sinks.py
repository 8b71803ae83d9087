r"""``pe_lib.sink_cache_positions`` against the ``SinkCache`` that transformers shipped, run (chapter 19, issue 29).

transformers 4.52.4 is the last release whose ``SinkCache`` works (4.53.0 keeps the name but its ``__init__``
raises ``NotImplementedError``: the class moved to the Hub as ``transformers-community/sink_cache``).
``make reference-sinks`` installs it with ``--no-deps`` into ``.venv-reference/sinks`` together with the
tokenizers and huggingface-hub versions it insists on (``requirements-reference-sinks.txt``), and runs this file
with that folder first on ``PYTHONPATH``; torch and pe_lib are ``.venv-reference``'s. Not collected by
``make reference`` or ``make test`` (the file name does not start with ``test_``).

The model is a tiny random Llama built here from a config (fixed seed, nothing downloaded) with one layer, so
that a cached key depends on nothing but its token and its position. That makes the cache readable: a slot's
value says which token it holds (values are not rotated), and its key says at which position it was rotated
(the unrotated key of every token is known, so the position is the one whose rotation reproduces the key).
The checks, for ``SinkCache(window_length=s + r, num_sink_tokens=s)`` fed one token at a time past the window:

1. the tokens it keeps and the positions of their keys equal ``pe_lib.sink_cache_positions(n, s, r,
   engine="transformers")``, exactly, and differ from StreamingLLM's own numbering (``engine="streaming-llm"``)
   in the way its docstring says (position ``s`` left empty);
2. the last token's logits equal those of a fresh forward pass of the kept tokens at pe_lib's positions, to
   float32 rounding, and differ clearly from a wrong account: the kept tokens at their text positions.

``generate()`` numbers the new tokens differently (by their text position, from the attention mask) while the
cache still turns every kept key back by one per step; the last test shows what that gives.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import transformers
from conftest import EPS32, record, relative_to_largest
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

import pe_lib

VERSION = "4.52.4"
VOCAB = 256
# float32 rounding of keys turned back up to r times, then one attention layer and the output projection
TOLERANCE = 64 * EPS32
CLEARLY = 100 * TOLERANCE  # a wrong account must move the logits by this much at least

# (window_length, num_sink_tokens, tokens fed): before the window fills, the step that fills it, the steps
# while the keys cached at the fill are still there, and long after; no sinks; a prompt of 6 fed at once first
CASES = [(10, 3, 9), (10, 3, 10), (10, 3, 11), (10, 3, 13), (10, 3, 17), (10, 3, 40), (12, 4, 30), (8, 0, 20)]
PROMPT = 6

with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)  # SinkCache's own deprecation warning
    from transformers import SinkCache


def test_the_installed_version_is_the_pinned_one():
    assert transformers.__version__ == VERSION, (transformers.__version__, transformers.__file__)


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                         rope_theta=10_000.0, attn_implementation="eager", bos_token_id=None, eos_token_id=None,
                         pad_token_id=0, initializer_range=0.3)  # weights large enough for sharp attention
    return LlamaForCausalLM(config).eval()


def _tokens(n: int, seed: int) -> torch.Tensor:
    """n distinct token ids, so that a cached value names its token (and the token its text position)."""
    return torch.randperm(VOCAB, generator=torch.Generator().manual_seed(seed))[:n]


def _sink_cache(window: int, sinks: int):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return SinkCache(window_length=window, num_sink_tokens=sinks)


@torch.no_grad()
def _read_cache(model, cache, tokens: torch.Tensor, max_position: int):
    """Layer 0 of the cache: (text position of each slot's token, the position its key is rotated at, worst misfit)."""
    attention = model.model.layers[0].self_attn
    heads, dim = model.config.num_key_value_heads, model.config.head_dim
    x = model.model.layers[0].input_layernorm(model.model.embed_tokens.weight)  # (V, hidden): each token alone
    raw_keys = attention.k_proj(x).view(VOCAB, heads, dim).transpose(0, 1)  # (heads, V, dim), unrotated
    raw_values = attention.v_proj(x).view(VOCAB, heads, dim).transpose(0, 1)
    keys, values = cache.key_cache[0][0], cache.value_cache[0][0]  # (heads, slots, dim)
    candidates = torch.arange(max_position + 1)
    cos, sin = model.model.rotary_emb(x, candidates[None])
    text_positions, positions, misfit = [], [], 0.0
    for slot in range(keys.shape[1]):
        token = int(((raw_values - values[:, slot:slot + 1]) ** 2).sum((0, 2)).argmin())
        value_misfit = float((raw_values[:, token] - values[:, slot]).abs().max() / values[:, slot].abs().max())
        assert value_misfit < TOLERANCE, f"a cached value is no token's own ({value_misfit:.3g} from the nearest)"
        tried = raw_keys[:, token:token + 1].expand(-1, candidates.numel(), -1)[None]
        rotated, _ = apply_rotary_pos_emb(tried, tried, cos, sin)  # the token's key at every candidate position
        error = (rotated[0] - keys[:, slot:slot + 1]).abs().amax((0, 2)) / keys[:, slot].abs().max()
        best = int(error.argmin())
        assert float(error.sort().values[1]) > 1e3 * float(error[best]), "the key fits two positions"
        text_positions.append(int((tokens == token).nonzero()[0, 0]))
        positions.append(best)
        misfit = max(misfit, float(error[best]))
    return np.array(text_positions), np.array(positions), misfit


@torch.no_grad()
def _run(model, window: int, sinks: int, n: int, seed: int):
    """Feed n tokens (a prompt of PROMPT at once, then one at a time): the cache and the last step's logits."""
    tokens = _tokens(n, seed)
    cache = _sink_cache(window, sinks)
    logits = model(input_ids=tokens[None, :PROMPT], past_key_values=cache, use_cache=True).logits[0, -1]
    for t in range(PROMPT, n):
        logits = model(input_ids=tokens[None, t:t + 1], past_key_values=cache, use_cache=True).logits[0, -1]
    return tokens, cache, logits.numpy().astype(np.float64)


@torch.no_grad()
def _fresh(model, tokens: torch.Tensor, kept: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The last logits of one forward pass over the kept tokens at the given positions, no cache."""
    out = model(input_ids=tokens[torch.from_numpy(kept)][None], position_ids=torch.from_numpy(positions)[None])
    return out.logits[0, -1].numpy().astype(np.float64)


@pytest.mark.parametrize("window, sinks, n", CASES)
def test_sink_cache_keeps_pe_libs_tokens_at_pe_libs_positions(model, window, sinks, n):
    tokens, cache, _ = _run(model, window, sinks, n, seed=n)
    text_positions, positions, misfit = _read_cache(model, cache, tokens, max_position=n + window)
    kept, ours = pe_lib.sink_cache_positions(n, sinks, window - sinks, engine="transformers")
    record(f"SinkCache keys vs their token rotated at the position read (transformers {VERSION})", misfit,
           TOLERANCE, "max |Δ| / max |key|")
    assert text_positions.tolist() == kept.tolist(), (text_positions, kept)
    assert positions.tolist() == ours.tolist(), (positions, ours)
    record(f"sink_cache_positions(engine='transformers') vs SinkCache (transformers {VERSION})",
           float(np.max(np.abs(positions - ours))), 0, "max |Δ| (integers)")
    streaming_kept, streaming = pe_lib.sink_cache_positions(n, sinks, window - sinks)
    assert streaming_kept.tolist() == kept.tolist()  # the same tokens either way
    if n >= window + window - sinks - 1:  # every key cached when the window filled is gone: position s is empty
        assert (positions - streaming).tolist() == [0] * sinks + [1] * (window - sinks)
    elif n < window:  # before the window fills: plain positions 0..n-1 in both
        assert positions.tolist() == streaming.tolist() == list(range(n))
    else:
        assert positions.tolist() != streaming.tolist()


@pytest.mark.parametrize("window, sinks, n", [case for case in CASES if case[2] > case[0]])
def test_last_logits_equal_a_fresh_pass_at_pe_libs_positions(model, window, sinks, n):
    tokens, _, theirs = _run(model, window, sinks, n, seed=n)
    kept, ours = pe_lib.sink_cache_positions(n, sinks, window - sinks, engine="transformers")
    difference = relative_to_largest(theirs, _fresh(model, tokens, kept, ours))
    record(f"SinkCache last logits vs a fresh pass at pe_lib's positions (transformers {VERSION})", difference,
           TOLERANCE, "max |Δ| / max |logit|")
    # a wrong account: the kept tokens at their text positions (no renumbering at all); with no sinks it differs
    # from the cache's numbering by a constant, which RoPE does not see
    wrong = relative_to_largest(theirs, _fresh(model, tokens, kept, kept))
    if sinks:
        record("SinkCache last logits vs a fresh pass at the text positions (wrong)", wrong, CLEARLY,
               "max |Δ| / max |logit|", at_least=True)
    # StreamingLLM's own numbering (position s not left empty) is another account, close but not this one
    _, streaming = pe_lib.sink_cache_positions(n, sinks, window - sinks)
    off = relative_to_largest(theirs, _fresh(model, tokens, kept, streaming))
    if sinks:
        record("SinkCache last logits vs a fresh pass at StreamingLLM's positions", off, CLEARLY,
               "max |Δ| / max |logit|", at_least=True)
    else:  # no sinks: the two numberings differ by a constant, which RoPE does not see
        record("SinkCache last logits vs StreamingLLM's positions, no sinks (a constant offset)", off, TOLERANCE,
               "max |Δ| / max |logit|")


@torch.no_grad()
def test_generate_numbers_new_tokens_by_text_position(model):
    """``generate()`` gives each new token its text position t (position_ids from the attention mask) while the
    cache turns the kept keys back by one per step, as in the forward loop: a kept token t >= s then sits at
    t - (n - max(t + 1, s + r - 1)), read from ``SinkCache.update`` and ``prepare_inputs_for_generation``; the
    newest keys are two positions apart instead of one. Neither of pe_lib's numberings."""
    window, sinks, n = 10, 3, 17
    prompt = _tokens(PROMPT, seed=1)[None]
    cache = _sink_cache(window, sinks)
    out = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=n - PROMPT + 1,
                         do_sample=False, no_repeat_ngram_size=1, past_key_values=cache, pad_token_id=0)
    tokens = out[0]  # n + 1 tokens, the last not yet in the cache
    text_positions, positions, misfit = _read_cache(model, cache, tokens, max_position=2 * n)
    kept, transformers_loop = pe_lib.sink_cache_positions(n, sinks, window - sinks, engine="transformers")
    assert text_positions.tolist() == kept.tolist() and misfit < TOLERANCE
    read = np.where(kept < sinks, kept, kept - np.maximum(n - np.maximum(kept + 1, window - 1), 0))
    assert positions.tolist() == read.tolist(), (positions, read)
    assert positions.tolist() != transformers_loop.tolist()
    assert positions[-1] - positions[-2] == 2
