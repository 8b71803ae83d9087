"""``pe_lib.sliding_window_slots`` against vLLM's sliding-window attention, run (chapter 19).

A two-layer Llama whose layers are ``"sliding_attention"`` with a window of W = 8 (and a Mistral checkpoint with
``sliding_window`` = 8, which vLLM serves the same way), a prompt of 40 tokens. vLLM's log-probabilities at every
position (``prompt_logprobs``) equal a float64 numpy forward pass in which the query at position i sees the keys
``sliding_window_slots(i + 1, W)`` says the cache holds, each rotated at its own position, and differ clearly
from the accounts in which the keys are rotated at their slot (the ring's p mod W), or every earlier key is seen.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import record
from tiny_model import forward_logprobs

import pe_lib

WINDOW = 8
N = 40
TOLERANCE = 1e-4  # float32 against float64, in log-probability (measured: about 2e-5)
APART = 0.1
PROMPT = np.random.default_rng(41).integers(3, 256, size=N)
MODELS = {"Llama, layer_types sliding": {"architecture": "LlamaForCausalLM",
                                         "layer_types": ["sliding_attention"] * 2},
          "Mistral, sliding_window only": {"architecture": "MistralForCausalLM"}}


def visible_keys(layout: str) -> np.ndarray:
    """bool (N, N): query i sees the positions pe_lib says a window cache holds after i + 1 tokens."""
    visible = np.zeros((N, N), dtype=bool)
    for i in range(N):
        visible[i, pe_lib.sliding_window_slots(i + 1, WINDOW, layout=layout)] = True
    return visible


@pytest.mark.parametrize("model", list(MODELS))
def test_sliding_window_sees_the_window_at_true_positions(engine_factory, model):
    engine, weights = engine_factory("window", seed=1, n_layer=2, sliding_window=WINDOW,
                                     engine_options={"enable_prefix_caching": False}, **MODELS[model])
    _, logprobs = engine.run(PROMPT, prompt_logprobs=True)
    def run(visible, **options):
        return forward_logprobs(weights, PROMPT, visible, n_layer=2, **options)

    for layout in pe_lib.SLIDING_LAYOUTS:
        record(f"sliding window ({layout}): at true positions", np.max(np.abs(logprobs - run(visible_keys(layout)))),
               TOLERANCE, "max |log p| difference, every position")
    ring = visible_keys("ring")
    record("sliding window: keys rotated at their ring slot",
           np.max(np.abs(logprobs - run(ring, key_positions=np.arange(N) % WINDOW))), APART,
           "max |log p| difference, every position", at_least=True)
    record("sliding window: no window (every earlier key)",
           np.max(np.abs(logprobs - run(np.tril(np.ones((N, N), dtype=bool))))), APART,
           "max |log p| difference, every position", at_least=True)
