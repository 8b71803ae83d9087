"""pe_lib against the running llama.cpp (``make reference-llamacpp``): a tiny random Llama in GGUF, run by
llama-cpp-python's bindings to the llama.cpp it bundles.

Only ``.venv-reference`` with ``requirements-llamacpp.txt`` installed has ``llama_cpp`` and ``gguf``;
``make test``, ``make unit`` and ``make reference`` never collect this folder (``norecursedirs`` in
``pyproject.toml``). The model is written here from a fixed seed (nothing is downloaded); every comparison
records its largest difference in :data:`RESULTS`, printed at the end of the run with the versions.
"""

from __future__ import annotations

import ctypes
import importlib.metadata
from pathlib import Path

import gguf
import llama_cpp
import numpy as np
import pytest

# comparison name -> [number of cases, largest difference, bound, "<=" or ">=", how it is measured]
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


def relative_to_largest(ours, theirs) -> float:
    """max |ours - theirs| / max |ours|: the difference relative to the largest logit."""
    ours, theirs = np.asarray(ours, dtype=np.float64), np.asarray(theirs, dtype=np.float64)
    assert ours.shape == theirs.shape, f"shapes differ: {ours.shape} vs {theirs.shape}"
    return float(np.max(np.abs(ours - theirs)) / np.max(np.abs(ours)))


def write_tiny_llama(path: Path, *, n_layer: int, seed: int, d_model: int = 64, n_head: int = 4, n_head_kv: int = 2,
                     d_ff: int = 128, n_vocab: int = 256, n_ctx_train: int = 32, base: float = 10_000.0) -> Path:
    """A Llama-architecture GGUF file with random float32 weights (no tokenizer: the tests pass token ids).

    Every weight matrix is standard normal over :math:`\\sqrt{d_\\text{in}}`, so attention scores are of
    order 1 and every cached key has a share of the attention (wider query and key weights make it nearly
    hard, and a key that gets no weight shows no change of position).
    """
    rng = np.random.default_rng(seed)
    d_head = d_model // n_head
    d_kv = n_head_kv * d_head

    def normal(*shape, scale=1.0):
        return (scale * rng.standard_normal(shape) / np.sqrt(shape[-1])).astype(np.float32)

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_context_length(n_ctx_train)
    writer.add_embedding_length(d_model)
    writer.add_block_count(n_layer)
    writer.add_feed_forward_length(d_ff)
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_head_kv)
    writer.add_rope_dimension_count(d_head)
    writer.add_rope_freq_base(base)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("none")
    writer.add_vocab_size(n_vocab)
    writer.add_tensor("token_embd.weight", (rng.standard_normal((n_vocab, d_model))).astype(np.float32))
    writer.add_tensor("output_norm.weight", np.ones(d_model, dtype=np.float32))
    writer.add_tensor("output.weight", normal(n_vocab, d_model))
    for i in range(n_layer):
        writer.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(d_model, dtype=np.float32))
        writer.add_tensor(f"blk.{i}.attn_q.weight", normal(d_model, d_model))
        writer.add_tensor(f"blk.{i}.attn_k.weight", normal(d_kv, d_model))
        writer.add_tensor(f"blk.{i}.attn_v.weight", normal(d_kv, d_model))
        writer.add_tensor(f"blk.{i}.attn_output.weight", normal(d_model, d_model))
        writer.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(d_model, dtype=np.float32))
        writer.add_tensor(f"blk.{i}.ffn_gate.weight", normal(d_ff, d_model))
        writer.add_tensor(f"blk.{i}.ffn_up.weight", normal(d_ff, d_model))
        writer.add_tensor(f"blk.{i}.ffn_down.weight", normal(d_model, d_ff))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


class Engine:
    """One llama.cpp context on a model file: float32 KV cache, one thread, no flash attention."""

    def __init__(self, path: Path, n_ctx: int):
        params = llama_cpp.llama_model_default_params()
        self.model = llama_cpp.llama_model_load_from_file(str(path).encode(), params)
        assert self.model, f"llama.cpp could not load {path}"
        self.n_vocab = llama_cpp.llama_vocab_n_tokens(llama_cpp.llama_model_get_vocab(self.model))
        cparams = llama_cpp.llama_context_default_params()
        cparams.n_ctx = cparams.n_batch = cparams.n_ubatch = n_ctx
        cparams.n_threads = cparams.n_threads_batch = 1
        cparams.type_k = cparams.type_v = llama_cpp.GGML_TYPE_F32  # the K-shift then rotates float32 keys
        cparams.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
        self.ctx = llama_cpp.llama_init_from_model(self.model, cparams)
        assert self.ctx, "llama.cpp could not create a context"
        self.memory = llama_cpp.llama_get_memory(self.ctx)

    def decode(self, tokens, positions) -> np.ndarray:
        """Decode ``tokens`` at ``positions`` (sequence 0) into the cache; the logits of the last, float32 (V,)."""
        tokens, positions = np.asarray(tokens), np.asarray(positions)
        n = tokens.size
        batch = llama_cpp.llama_batch_init(n, 0, 1)
        try:
            batch.n_tokens = n
            for i in range(n):
                batch.token[i] = int(tokens[i])
                batch.pos[i] = int(positions[i])
                batch.n_seq_id[i] = 1
                batch.seq_id[i][0] = 0
                batch.logits[i] = i == n - 1
            status = llama_cpp.llama_decode(self.ctx, batch)
            assert status == 0, f"llama_decode returned {status}"
            logits = llama_cpp.llama_get_logits_ith(self.ctx, n - 1)
            return np.ctypeslib.as_array(ctypes.cast(logits, ctypes.POINTER(ctypes.c_float)),
                                         shape=(self.n_vocab,)).copy()
        finally:
            llama_cpp.llama_batch_free(batch)

    def clear(self) -> None:
        llama_cpp.llama_memory_clear(self.memory, True)

    def positions(self) -> tuple[int, int]:
        """The smallest and largest position the cache holds for sequence 0."""
        return (llama_cpp.llama_memory_seq_pos_min(self.memory, 0), llama_cpp.llama_memory_seq_pos_max(self.memory, 0))

    def close(self) -> None:
        llama_cpp.llama_free(self.ctx)
        llama_cpp.llama_model_free(self.model)


GGML_LOG_LEVEL_ERROR = 4  # ggml.h's enum ggml_log_level (DEBUG 1, INFO 2, WARN 3, ERROR 4, CONT 5)


def _quiet_log(level, text, user_data):  # llama.cpp's loader logs every key and tensor; keep errors only
    if level == GGML_LOG_LEVEL_ERROR:
        print(text.decode(errors="replace"), end="")


_LOG_CALLBACK = llama_cpp.llama_log_callback(_quiet_log)  # kept alive for the whole run


@pytest.fixture(scope="session", autouse=True)
def _backend():
    llama_cpp.llama_log_set(_LOG_CALLBACK, ctypes.c_void_p(0))
    llama_cpp.llama_backend_init()
    yield
    llama_cpp.llama_backend_free()


@pytest.fixture(scope="session")
def engine_factory(tmp_path_factory):
    """engine_factory(n_layer, n_ctx): an :class:`Engine` on a tiny random Llama with that many layers."""
    made = []

    def make(n_layer: int, n_ctx: int = 32) -> Engine:
        path = write_tiny_llama(tmp_path_factory.mktemp("gguf") / f"tiny-{n_layer}.gguf", n_layer=n_layer,
                                seed=1900 + n_layer, n_ctx_train=n_ctx)
        made.append(Engine(path, n_ctx))
        return made[-1]

    yield make
    for engine in made:
        engine.close()


def pytest_terminal_summary(terminalreporter):
    if not RESULTS:
        return
    versions = (f"llama-cpp-python {importlib.metadata.version('llama-cpp-python')} "
                f"(llama.cpp {_llama_cpp_commit()}), "
                f"gguf {importlib.metadata.version('gguf')}")
    terminalreporter.section(f"differences, largest if bounded above, smallest if below ({versions})")
    width = max(len(name) for name in RESULTS)
    terminalreporter.write_line(f"{'comparison':<{width}}  cases  measured    bound      measured as")
    for name, (cases, difference, bound, sense, measure) in RESULTS.items():
        terminalreporter.write_line(f"{name:<{width}}  {cases:5d}  {difference:.3e}  {sense} {bound:.1e}  {measure}")


def _llama_cpp_commit() -> str:
    """The llama.cpp commit the bindings were built from, as ggml reports it (``ggml_commit``), if exposed."""
    try:
        lib = llama_cpp.llama_cpp._lib
        lib.ggml_commit.restype = ctypes.c_char_p
        return "commit " + lib.ggml_commit().decode()
    except AttributeError:
        return "commit unknown"
