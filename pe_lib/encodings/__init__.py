"""The encodings and their maths: the sinusoidal table and its frequencies, the shift matrix, RoPE,
ALiBi, T5's buckets, floating-point precision and the implementations found in the wild.
Numpy only. Used by nearly every chapter (1-15, 17, 18).
"""

from .alibi import alibi_bias, alibi_slopes
from .frequencies import frequencies, wavelengths
from .hands import cross_z, embedded_positions, hand_positions, rotation_sense
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
from .rope import rope, rope_decay_bound, rope_score_bound
from .shift import apply_shift, shift_matrix
from .sinusoidal import sinusoidal, sinusoidal_loop
from .t5 import t5_relative_bucket
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
    "alibi_bias",
    "alibi_slopes",
    "angle_error",
    "apply_shift",
    "buggy_sinusoidal",
    "cross_z",
    "distinct_positions",
    "embedded_positions",
    "encoding_error",
    "encoding_errors",
    "fairseq_positions",
    "fairseq_sinusoidal",
    "frequencies",
    "hand_positions",
    "implementation_table",
    "IMPLEMENTATIONS",
    "integer_limit",
    "largest_finite",
    "layout_permutation",
    "low_precision_angles",
    "low_precision_sinusoidal",
    "permutation_matrix",
    "permuted_blocks",
    "rope",
    "rope_decay_bound",
    "rope_score_bound",
    "rotation_sense",
    "round_to_bfloat16",
    "round_to_precision",
    "shift_matrix",
    "sinusoidal",
    "sinusoidal_loop",
    "t5_relative_bucket",
    "wavelengths",
]
