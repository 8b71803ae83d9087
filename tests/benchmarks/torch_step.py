"""The book's Transformer in PyTorch eager: the yardstick for pe_lib's training step (``make bench``).

Run with ``make reference``'s Python (``.venv-reference``, which has torch; ``make test`` never installs it)::

    .venv-reference/bin/python tests/benchmarks/torch_step.py 64 2 4 128 16 --threads 2

Arguments: d_model, n_layers, n_heads, seq_len, batch_size. The model is the one of
``pe_lib/trained/transformer.py`` for the "text" task with RoPE: token embedding, pre-LN blocks with
multi-head attention (no biases in W_Q, W_K, W_V, W_O; interleaved RoPE, base 10000, on queries and
keys; a causal mask) and a ReLU MLP of width 4 d_model, a final layer norm and an unembedding; Adam
(optimizer.step after each backward pass), cross-entropy over every position. Batches are random
characters: the arithmetic does not depend on them. Prints one JSON line: the median, fastest and
slowest seconds per step over ``--rounds`` rounds of ``--steps`` steps after ``--warmup`` steps.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch
from torch import nn

VOCAB = 128  # ASCII, as pe_lib.trained.corpus
BASE = 10_000.0


def rope_tables(seq_len: int, d_k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of pos * omega_k, omega_k = BASE^(-2k/d_k): (L, d_k/2) each."""
    omega = BASE ** (-torch.arange(0, d_k, 2, dtype=torch.float32) / d_k)  # (d_k/2,)
    angles = torch.arange(seq_len, dtype=torch.float32)[:, None] * omega  # (L, d_k/2)
    return angles.cos(), angles.sin()


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Interleaved pairs (x_2k, x_2k+1) turned by pos * omega_k: x (B, H, L, d_k)."""
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2)


class Block(nn.Module):
    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        self.n_heads = n_heads
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)  # W_Q, W_K, W_V of every head
        self.out = nn.Linear(d_model, d_model, bias=False)  # W_O
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.ReLU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x, cos, sin):
        batch, length, d_model = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d_model, dim=-1)  # (B, L, d_model) each
        q, k, v = (t.view(batch, length, self.n_heads, -1).transpose(1, 2) for t in (q, k, v))  # (B, H, L, d_k)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        heads = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)  # softmax(q k^T / sqrt(d_k)) v
        x = x + self.out(heads.transpose(1, 2).reshape(batch, length, d_model))
        return x + self.mlp(self.ln2(x))


class Transformer(nn.Module):
    def __init__(self, d_model: int, n_layers: int, n_heads: int, seq_len: int):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, d_model)
        self.blocks = nn.ModuleList(Block(d_model, n_heads) for _ in range(n_layers))
        self.lnf = nn.LayerNorm(d_model)
        self.unembed = nn.Linear(d_model, VOCAB, bias=False)
        cos, sin = rope_tables(seq_len, d_model // n_heads)
        self.register_buffer("cos", cos)
        self.register_buffer("sin", sin)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x, self.cos, self.sin)
        return self.unembed(self.lnf(x))  # (B, L, V)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("d_model", "n_layers", "n_heads", "seq_len", "batch_size"):
        parser.add_argument(name, type=int)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    model = Transformer(args.d_model, args.n_layers, args.n_heads, args.seq_len)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    generator = torch.Generator().manual_seed(0)
    tokens = torch.randint(32, VOCAB, (args.batch_size, args.seq_len + 1), generator=generator)

    def step():
        logits = model(tokens[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    for _ in range(args.warmup):
        step()
    per_step = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        for _ in range(args.steps):
            step()
        per_step.append((time.perf_counter() - start) / args.steps)
    print(json.dumps({"median": statistics.median(per_step), "min": min(per_step), "max": max(per_step),
                      "threads": args.threads, "torch": torch.__version__}))


if __name__ == "__main__":
    main()
