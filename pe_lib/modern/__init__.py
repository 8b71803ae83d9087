"""Positions in today's models: rope_scaling, context extension, timesteps, grids, M-RoPE, resampling, padding,
packing, chunked prefill, speculative decoding, cache shifts, serving, NoPE, windowed layers, temperatures.
Numpy only. Used by chapters 13, 17, 18, 19 and 21.
"""

from .cache_shift import (
    SINK_CACHE_ENGINES,
    SLIDING_LAYOUTS,
    STALE_ROLES,
    context_shift,
    prefix_cache_hit,
    rope_shift,
    sink_cache_positions,
    sliding_window_slots,
    stale_cache_roles,
)
from .confidence import prediction_entropy
from .context_extension import (
    ntk_base,
    ntk_frequencies,
    pi_frequencies,
    yarn_attention_factor,
    yarn_correction_range,
    yarn_frequencies,
    yarn_ramp,
)
from .conventions import TIMESTEP_CONVENTIONS, layout_misread_permutation, permuted_qk, timestep_convention_match
from .grid import sinusoidal_2d
from .layer_types import ATTENTION_KINDS, largest_offset, layer_attention_mask, layer_positions
from .mrope import VIDEO_TIME_RULES, mrope, mrope_positions, mrope_video_positions
from .packing import (
    cu_seq_lens,
    cu_seq_lens_from_position_ids,
    documents_from_position_ids,
    documents_in_transformers_mask,
    packed_attention_mask,
    packed_document_ids,
    packed_labels,
    packed_position_ids,
)
from .padding import (
    ALIBI_COUNTS,
    alibi_key_bias,
    cache_positions,
    generation_position_ids,
    pad_batch,
    padding_mask,
    position_ids_from_mask,
)
from .prefill import prefill_chunk, prefill_chunk_bounds
from .resample import cubic_kernel, resample_grid, resample_weights
from .rope_scaling import ROPE_TYPES, RopeScalingWarning, config_rope_frequencies, rope_scaling_frequencies
from .serving import (
    VLLM_DYNAMIC_COMMITS,
    llama_cpp_frequencies,
    serving_settings,
    vllm_dynamic_frequencies,
    vllm_max_model_len,
)
from .speculative import speculative_draft_round, speculative_round
from .temperature import entropy_by_length, nope_temperature, scalable_softmax, softmax_entropy, target_weight
from .timestep import timestep_embedding

__all__ = [
    "ATTENTION_KINDS",
    "entropy_by_length",
    "layer_attention_mask",
    "layer_positions",
    "largest_offset",
    "nope_temperature",
    "scalable_softmax",
    "softmax_entropy",
    "target_weight",
    "cache_positions",
    "alibi_key_bias",
    "ALIBI_COUNTS",
    "config_rope_frequencies",
    "cu_seq_lens",
    "cu_seq_lens_from_position_ids",
    "cubic_kernel",
    "layout_misread_permutation",
    "documents_from_position_ids",
    "documents_in_transformers_mask",
    "generation_position_ids",
    "llama_cpp_frequencies",
    "mrope",
    "mrope_positions",
    "mrope_video_positions",
    "prefill_chunk",
    "prefill_chunk_bounds",
    "speculative_draft_round",
    "speculative_round",
    "VIDEO_TIME_RULES",
    "ntk_base",
    "ntk_frequencies",
    "packed_attention_mask",
    "packed_document_ids",
    "packed_labels",
    "packed_position_ids",
    "pad_batch",
    "permuted_qk",
    "padding_mask",
    "pi_frequencies",
    "position_ids_from_mask",
    "resample_grid",
    "resample_weights",
    "rope_scaling_frequencies",
    "rope_shift",
    "prediction_entropy",
    "stale_cache_roles",
    "prefix_cache_hit",
    "sink_cache_positions",
    "context_shift",
    "sliding_window_slots",
    "SLIDING_LAYOUTS",
    "SINK_CACHE_ENGINES",
    "STALE_ROLES",
    "ROPE_TYPES",
    "RopeScalingWarning",
    "serving_settings",
    "vllm_dynamic_frequencies",
    "vllm_max_model_len",
    "VLLM_DYNAMIC_COMMITS",
    "sinusoidal_2d",
    "timestep_convention_match",
    "timestep_embedding",
    "TIMESTEP_CONVENTIONS",
    "yarn_attention_factor",
    "yarn_correction_range",
    "yarn_frequencies",
    "yarn_ramp",
]
