"""The trained models of chapters 14-16 and 19: the JAX Transformer, its tasks, training, repeated runs
with their spread, what a model learned, and a model run at explicit positions behind a given mask.
JAX and optax are imported on the first training call, never by `import pe_lib`.
"""

from .attention_offsets import score_by_offset, weight_at_offset
from .baselines import order_blind_accuracy
from .explicit_positions import logits_at, predict_at
from .head_terms import commuting_projection, commuting_share, head_score_terms, positional_form, term_shares
from .model_analysis import (
    attention_by_offset,
    offset_r_squared,
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
    task_loss,
    train_grid,
    train_transformer,
    train_transformers,
)

__all__ = [
    "validation_losses",
    "trained_scores",
    "train_grid",
    "task_loss",
    "score_by_offset",
    "best_setting",
    "accuracy_by_position",
    "attention_by_offset",
    "commuting_projection",
    "commuting_share",
    "ENCODINGS",
    "head_score_terms",
    "offset_r_squared",
    "logits_at",
    "order_blind_accuracy",
    "position_table",
    "positional_form",
    "predict",
    "predict_at",
    "residual_stream",
    "running_mean",
    "scored_positions",
    "seed_spread",
    "spread_table",
    "spread_text",
    "steps_to_loss",
    "task_accuracy",
    "term_shares",
    "task_batch",
    "task_targets",
    "TASKS",
    "train_transformer",
    "train_transformers",
    "trained_attention",
    "TrainedTransformer",
    "weight_at_offset",
]
