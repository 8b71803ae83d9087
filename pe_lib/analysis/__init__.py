"""Analysis of encodings and of the numpy model: similarity and dot profiles, word-vs-position
embeddings, attention by offset, linear probes and fits, the choice of the base.
Numpy only; real position tables. Used by chapters 1, 2, 4, 6-9, 11-13, 16, 18 and 20.
"""

from .base_analysis import (
    base_summary,
    constant_pairs,
    first_closer_than_neighbour,
    mean_squared_distance,
    nearest_other_position,
    neighbour_distance,
    squared_distance,
)
from .classifier import fit_linear_discriminant, heldout_accuracy, layer_classifier
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
from .linear_fit import fit_linear_map, r_squared
from .pretrained_table import load_position_table, minilm_max_seq_length, minilm_position_table, minilm_weights
from .probe import fit_probe, heldout_r_squared, layer_probe, token_spread
from .relative import first_negative, first_rise, mass_on_offset, offset_attention, offset_attention_projections
from .similarity import dot_profile
from .table_analysis import (
    column_frequencies,
    components_for_variance,
    cosine_profile,
    dot_by_offset,
    position_regression_error,
    position_regression_splits,
    principal_components,
    principal_directions,
)

__all__ = [
    "column_frequencies",
    "cosine_profile",
    "dot_by_offset",
    "load_position_table",
    "minilm_max_seq_length",
    "minilm_position_table",
    "minilm_weights",
    "position_regression_error",
    "position_regression_splits",
    "components_for_variance",
    "principal_components",
    "principal_directions",
    "base_summary",
    "constant_pairs",
    "cosine_matrix",
    "dot_profile",
    "first_closer_than_neighbour",
    "first_negative",
    "first_rise",
    "fit_linear_discriminant",
    "fit_linear_map",
    "fit_probe",
    "heldout_accuracy",
    "heldout_r_squared",
    "layer_classifier",
    "layer_probe",
    "mass_on_offset",
    "mean_squared_distance",
    "nearest_other_position",
    "nearest_token_accuracy",
    "neighbour_distance",
    "offset_attention",
    "offset_attention_projections",
    "position_recovery_accuracy",
    "predicted_position_accuracy",
    "r_squared",
    "random_cosines",
    "random_embeddings",
    "score_terms",
    "squared_distance",
    "token_spread",
    "transformer_parameters",
]
