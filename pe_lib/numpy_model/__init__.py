"""The numpy Transformer of chapter 7: scaled dot-product attention, masks and blocks of layers.
Small enough to read top to bottom; no training (that is pe_lib.trained).
Numpy only. Used by chapters 1, 7, 8, 11, 12 and 13.
"""

from .attention import attention_weights, causal_mask, self_attention, softmax
from .layers import init_blocks, layer_norm, mlp, multi_head_attention, run_stack, transformer_block

__all__ = [
    "attention_weights",
    "causal_mask",
    "init_blocks",
    "layer_norm",
    "mlp",
    "multi_head_attention",
    "run_stack",
    "self_attention",
    "softmax",
    "transformer_block",
]
