"""The trained models of chapters 14-16: the JAX Transformer, its tasks, training, repeated runs
with their spread, and the analysis of what a trained model learned.
JAX and optax are imported on the first training call, never by `import pe_lib`.
"""

from .attention_offsets import weight_at_offset
from .baselines import order_blind_accuracy
from .model_analysis import attention_by_offset, position_table, predict, residual_stream, trained_attention
from .runs import accuracy_by_position, running_mean, seed_spread, spread_table, spread_text, steps_to_loss
from .tasks import TASKS, scored_positions, task_batch, task_targets
from .training import ENCODINGS, TrainedTransformer, task_accuracy, train_transformer, train_transformers

__all__ = [
    "accuracy_by_position",
    "attention_by_offset",
    "ENCODINGS",
    "order_blind_accuracy",
    "position_table",
    "predict",
    "residual_stream",
    "running_mean",
    "scored_positions",
    "seed_spread",
    "spread_table",
    "spread_text",
    "steps_to_loss",
    "task_accuracy",
    "task_batch",
    "task_targets",
    "TASKS",
    "train_transformer",
    "train_transformers",
    "trained_attention",
    "TrainedTransformer",
    "weight_at_offset",
]
