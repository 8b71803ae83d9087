"""pe_lib: the small, tested library behind *Positional Encoding, Explained and Verified*.

One module per idea; every function validates its arguments and documents its formula and
the shape of what it returns.
"""

from .alibi import alibi_bias, alibi_slopes
from .attention import attention_weights, causal_mask, self_attention, softmax
from .attention_offsets import weight_at_offset
from .base_analysis import (
    base_summary,
    constant_pairs,
    first_closer_than_neighbour,
    mean_squared_distance,
    nearest_other_position,
    neighbour_distance,
    squared_distance,
)
from .base_explorer import base_explorer, draw_base_overview
from .baselines import order_blind_accuracy
from .clock import (
    clock_animation_html,
    clock_widget,
    cross_z,
    draw_clock,
    draw_word_circles,
    embedded_positions,
    hand_positions,
    player_html,
    png_frames,
    rotation_sense,
)
from .context_extension import (
    ntk_base,
    ntk_frequencies,
    pi_frequencies,
    yarn_attention_factor,
    yarn_correction_range,
    yarn_frequencies,
    yarn_ramp,
)
from .embedding import (
    cosine_matrix,
    nearest_token_accuracy,
    position_recovery_accuracy,
    predicted_position_accuracy,
    random_cosines,
    random_embeddings,
    score_terms,
    transformer_parameters,
)
from .explorer import explorer_figure, explorer_summary, explorer_widget
from .figures import figure_digest, show
from .frequencies import frequencies, wavelengths
from .grid import sinusoidal_2d
from .layers import init_blocks, layer_norm, mlp, multi_head_attention, run_stack, transformer_block
from .linear_fit import fit_linear_map, r_squared
from .model_analysis import attention_by_offset, position_table, predict, residual_stream, trained_attention
from .mrope import mrope, mrope_positions
from .numbers import magnitude_text
from .plots import binary_digits, bit_wave, heatmap, heatmap_grid, new_figure, zero_crossings
from .precision import (
    angle_error,
    distinct_positions,
    encoding_error,
    encoding_errors,
    integer_limit,
    largest_finite,
    low_precision_angles,
    low_precision_sinusoidal,
    round_to_bfloat16,
    round_to_precision,
)
from .probe import fit_probe, heldout_r_squared, layer_probe, token_spread
from .relative import first_negative, first_rise, mass_on_offset, offset_attention, offset_attention_projections
from .resample import cubic_kernel, resample_grid, resample_weights
from .rope import rope, rope_decay_bound, rope_score_bound
from .rope_scaling import ROPE_TYPES, rope_scaling_frequencies
from .rounding import below
from .runs import accuracy_by_position, running_mean, seed_spread, spread_table, spread_text, steps_to_loss
from .shift import apply_shift, shift_matrix
from .similarity import dot_profile
from .sinusoidal import sinusoidal, sinusoidal_loop
from .t5 import t5_relative_bucket
from .tasks import TASKS, scored_positions, task_batch, task_targets
from .timestep import timestep_embedding
from .training import ENCODINGS, TrainedTransformer, task_accuracy, train_transformer, train_transformers
from .variants import (
    IMPLEMENTATIONS,
    buggy_sinusoidal,
    fairseq_positions,
    fairseq_sinusoidal,
    implementation_table,
    layout_permutation,
    permutation_matrix,
    permuted_blocks,
)

__all__ = [
    "ENCODINGS",
    "IMPLEMENTATIONS",
    "ROPE_TYPES",
    "accuracy_by_position",
    "TASKS",
    "alibi_bias",
    "alibi_slopes",
    "angle_error",
    "apply_shift",
    "attention_by_offset",
    "attention_weights",
    "base_explorer",
    "base_summary",
    "below",
    "binary_digits",
    "bit_wave",
    "buggy_sinusoidal",
    "causal_mask",
    "clock_animation_html",
    "clock_widget",
    "constant_pairs",
    "cosine_matrix",
    "cross_z",
    "cubic_kernel",
    "distinct_positions",
    "dot_profile",
    "draw_base_overview",
    "draw_clock",
    "draw_word_circles",
    "embedded_positions",
    "encoding_error",
    "encoding_errors",
    "explorer_figure",
    "explorer_summary",
    "explorer_widget",
    "fairseq_positions",
    "fairseq_sinusoidal",
    "figure_digest",
    "first_closer_than_neighbour",
    "first_negative",
    "first_rise",
    "fit_linear_map",
    "fit_probe",
    "frequencies",
    "hand_positions",
    "heatmap",
    "heatmap_grid",
    "heldout_r_squared",
    "implementation_table",
    "init_blocks",
    "integer_limit",
    "largest_finite",
    "layer_norm",
    "layer_probe",
    "layout_permutation",
    "low_precision_angles",
    "low_precision_sinusoidal",
    "magnitude_text",
    "mass_on_offset",
    "mlp",
    "mrope",
    "mrope_positions",
    "multi_head_attention",
    "mean_squared_distance",
    "nearest_other_position",
    "nearest_token_accuracy",
    "neighbour_distance",
    "new_figure",
    "ntk_base",
    "ntk_frequencies",
    "offset_attention",
    "order_blind_accuracy",
    "offset_attention_projections",
    "permutation_matrix",
    "permuted_blocks",
    "pi_frequencies",
    "player_html",
    "png_frames",
    "position_recovery_accuracy",
    "position_table",
    "predict",
    "predicted_position_accuracy",
    "r_squared",
    "random_cosines",
    "random_embeddings",
    "resample_grid",
    "resample_weights",
    "residual_stream",
    "rope",
    "rope_decay_bound",
    "rope_scaling_frequencies",
    "rope_score_bound",
    "rotation_sense",
    "round_to_bfloat16",
    "round_to_precision",
    "run_stack",
    "score_terms",
    "running_mean",
    "seed_spread",
    "scored_positions",
    "self_attention",
    "shift_matrix",
    "show",
    "sinusoidal",
    "sinusoidal_2d",
    "sinusoidal_loop",
    "softmax",
    "spread_table",
    "spread_text",
    "squared_distance",
    "steps_to_loss",
    "t5_relative_bucket",
    "timestep_embedding",
    "task_accuracy",
    "task_batch",
    "task_targets",
    "token_spread",
    "train_transformer",
    "train_transformers",
    "trained_attention",
    "TrainedTransformer",
    "transformer_block",
    "transformer_parameters",
    "wavelengths",
    "weight_at_offset",
    "yarn_attention_factor",
    "yarn_correction_range",
    "yarn_frequencies",
    "yarn_ramp",
    "zero_crossings",
]
