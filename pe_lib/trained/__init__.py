"""The trained models of chapters 14-16, 19 and 20: the JAX Transformer, its tasks (real text included),
training and its fair protocol, repeated runs, what a model learned, and a model run at explicit positions.
JAX and optax are imported on the first training call, never by `import pe_lib`.
"""

from ..book.machine import pin_trained_kernels
from .attention_offsets import score_by_offset, weight_at_offset
from .baselines import order_blind_accuracy
from .corpus import CORPORA, corpus_split, decode_text, encode_text, held_out_windows, text_batch, unigram_bits
from .explicit_positions import logits_at, predict_at
from .head_terms import commuting_projection, commuting_share, head_score_terms, positional_form, term_shares
from .language_model import task_loss, text_loss
from .model_analysis import (
    attention_by_offset,
    model_with_permuted_qk,
    offset_r_squared,
    parameter_count,
    position_table,
    predict,
    residual_stream,
    trained_attention,
    trained_scores,
)
from .protocol import best_setting, validation_losses
from .runs import accuracy_by_position, running_mean, seed_spread, spread_table, spread_text, steps_to_loss
from .tasks import TASKS, scored_positions, task_batch, task_targets
from .training import (
    ENCODINGS,
    TrainedTransformer,
    task_accuracy,
    train_grid,
    train_transformer,
    train_transformers,
)

# oneDNN (which XLA calls for matrix products) is held to AVX2 and XLA's CPU client to two threads here,
# at import pe_lib, before JAX first computes: the same trained weights, bit for bit, on every x86
# processor whatever its number of cores (pe_lib/book/machine.py; a value set by hand is kept)
pin_trained_kernels()

__all__ = [
    "accuracy_by_position",
    "attention_by_offset",
    "best_setting",
    "commuting_projection",
    "commuting_share",
    "CORPORA",
    "corpus_split",
    "decode_text",
    "encode_text",
    "ENCODINGS",
    "head_score_terms",
    "held_out_windows",
    "logits_at",
    "model_with_permuted_qk",
    "offset_r_squared",
    "order_blind_accuracy",
    "parameter_count",
    "position_table",
    "positional_form",
    "predict",
    "predict_at",
    "residual_stream",
    "running_mean",
    "score_by_offset",
    "scored_positions",
    "seed_spread",
    "spread_table",
    "spread_text",
    "steps_to_loss",
    "task_accuracy",
    "task_batch",
    "task_loss",
    "task_targets",
    "TASKS",
    "term_shares",
    "text_batch",
    "text_loss",
    "train_grid",
    "train_transformer",
    "train_transformers",
    "trained_attention",
    "trained_scores",
    "TrainedTransformer",
    "unigram_bits",
    "validation_losses",
    "weight_at_offset",
]
