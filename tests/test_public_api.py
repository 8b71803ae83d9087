"""pe_lib's public surface and its layout: the names every chapter imports, and where each one lives.

The list below is ``pe_lib.__all__`` as it was before the library moved into subpackages (written out
here, not read from the code under test): every name must stay importable as ``pe_lib.NAME`` with the
same meaning, so that no notebook changes. The layout rules themselves (imports run downward, the maths
imports no plotting, widget or training library) are checked by import-linter in ``make lint``.
"""

import importlib
import pathlib
import subprocess
import sys
import types

import pytest

import pe_lib

PUBLIC = [
    "ENCODINGS",
    "IMPLEMENTATIONS",
    "ROPE_TYPES",
    "TASKS",
    "TrainedTransformer",
    "accuracy_by_position",
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
    "mean_squared_distance",
    "mlp",
    "mrope",
    "mrope_positions",
    "multi_head_attention",
    "nearest_other_position",
    "nearest_token_accuracy",
    "neighbour_distance",
    "new_figure",
    "ntk_base",
    "ntk_frequencies",
    "offset_attention",
    "offset_attention_projections",
    "order_blind_accuracy",
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
    "running_mean",
    "score_terms",
    "scored_positions",
    "seed_spread",
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
    "task_accuracy",
    "task_batch",
    "task_targets",
    "timestep_embedding",
    "token_spread",
    "train_transformer",
    "train_transformers",
    "trained_attention",
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

SUBPACKAGES = ("analysis", "book", "drawing", "encodings", "modern", "numpy_model", "trained")


def test_the_public_names_are_the_ones_before_the_move():
    assert len(PUBLIC) == 130
    assert sorted(pe_lib.__all__, key=str.lower) == sorted(PUBLIC + ADDED, key=str.lower)


# Names added after the move, each with the issue that asked for it.
ADDED = [
    "seed_table",  # issue 27: results over seeds in chapters 20 and 21, the range under the mean
    "draw_layer_masks",  # issue 31: chapter 21, NoPE layers, windows and temperatures
    "draw_layer_strips",  # issue 31: chapter 21, NoPE layers, windows and temperatures
    "ATTENTION_KINDS",  # issue 31: chapter 21, NoPE layers, windows and temperatures
    "entropy_by_length",  # issue 31: chapter 21, NoPE layers, windows and temperatures
    "layer_attention_mask",  # issue 31: chapter 21, NoPE layers, windows and temperatures
    "layer_positions",  # issue 31: chapter 21, NoPE layers, windows and temperatures
    "largest_offset",  # issue 31: chapter 21, NoPE layers, windows and temperatures
    "nope_temperature",  # issue 31: chapter 21, NoPE layers, windows and temperatures
    "scalable_softmax",  # issue 31: chapter 21, NoPE layers, windows and temperatures
    "softmax_entropy",  # issue 31: chapter 21, NoPE layers, windows and temperatures
    "target_weight",  # issue 31: chapter 21, NoPE layers, windows and temperatures
    "permuted_qk",  # issue 21: chapter 19, converted checkpoints
    "layout_misread_permutation",  # issue 21: chapter 19, converted checkpoints
    "timestep_convention_match",  # issue 21: chapter 19, converted checkpoints
    "TIMESTEP_CONVENTIONS",  # issue 21: chapter 19, converted checkpoints
    "config_rope_frequencies",  # issue 20: read a whole config.json as transformers 5.23.0 does
    "RopeScalingWarning",  # issue 20: what transformers only warns about
    "cu_seq_lens",  # issue 21: chapter 19
    "documents_from_position_ids",  # issue 21: chapter 19
    "generation_position_ids",  # issue 21: chapter 19
    "llama_cpp_frequencies",  # issue 21: chapter 19
    "logits_at",  # issue 21: chapter 19
    "pad_batch",  # issue 21: chapter 19
    "packed_attention_mask",  # issue 21: chapter 19
    "packed_document_ids",  # issue 21: chapter 19
    "packed_position_ids",  # issue 21: chapter 19
    "padding_mask",  # issue 21: chapter 19
    "position_ids_from_mask",  # issue 21: chapter 19
    "predict_at",  # issue 21: chapter 19
    "rope_shift",  # issue 21: chapter 19
    "serving_settings",  # issue 21: chapter 19
    "commuting_projection",  # issue 17: chapter 16's interventions
    "commuting_share",  # issue 17: chapter 16's interventions
    "fit_linear_discriminant",  # issue 17: chapter 16's interventions
    "head_score_terms",  # issue 17: chapter 16's interventions
    "heldout_accuracy",  # issue 17: chapter 16's interventions
    "layer_classifier",  # issue 17: chapter 16's interventions
    "offset_r_squared",  # issue 17: chapter 16's interventions
    "positional_form",  # issue 17: chapter 16's interventions
    "term_shares",  # issue 17: chapter 16's interventions
    "best_setting",  # issue 17: the fair protocol of chapters 14-15
    "score_by_offset",  # issue 17: intervention (a) of chapter 15
    "task_loss",  # issue 17: chapter 14's measure off the ceiling
    "train_grid",  # issue 17: the per-scheme search
    "trained_scores",  # issue 17: chapter 15
    "validation_losses",  # issue 17: the per-scheme search
    "column_frequencies",  # issue 18: chapter 20, real text
    "CORPORA",  # issue 18: chapter 20, real text
    "corpus_split",  # issue 18: chapter 20, real text
    "cosine_profile",  # issue 18: chapter 20, real text
    "decode_text",  # issue 18: chapter 20, real text
    "dot_by_offset",  # issue 18: chapter 20, real text
    "encode_text",  # issue 18: chapter 20, real text
    "held_out_windows",  # issue 18: chapter 20, real text
    "encoding_bars",  # issue 19 item 12: the opening figure of chapter 3, the home and ten-minute pages
    "shown",  # issue 19 item 12: pe_lib.show's image as an object, for myst-nb's glue
    "load_position_table",  # issue 18: chapter 20, real text
    "minilm_position_table",  # issue 18: chapter 20, real text
    "minilm_weights",  # issue 18: chapter 2 reads the word table of the same checked file
    "position_regression_error",  # issue 18: chapter 20, Wang & Chen's test on a real table
    "position_regression_splits",  # issue 27: chapter 20, the same test over 200 splits, components fitted per fold
    "minilm_max_seq_length",  # issue 27: chapter 20, the 256 tokens the shipped MiniLM pipeline keeps
    "principal_components",  # issue 18: chapter 20, real text
    "parameter_count",  # issue 18: chapter 20 counted its model's parameters in a cell of its own
    "principal_directions",  # issue 18: chapter 2 projected word rows on the position table's directions
    "components_for_variance",  # issue 18: chapter 2, how many directions hold 90% of the table's variance
    "text_batch",  # issue 18: chapter 20, real text
    "text_loss",  # issue 18: bits per character (pe_lib.task_loss calls it for text models)
    "unigram_bits",  # issue 18: chapter 20, real text
    "model_with_permuted_qk",  # issue 20: chapter 19's read_by, a whole model read by the other RoPE layout
    "documents_in_transformers_mask",  # issue 29: chapter 19, a pack without a mask meets the cache
    "cu_seq_lens_from_position_ids",  # issue 29: chapter 19, the flash-attention path
    "packed_labels",  # issue 29: chapter 19, the collator's -100 labels
    "vllm_dynamic_frequencies",  # issue 29: chapter 19, vLLM's dynamic before and after PR 41277
    "vllm_max_model_len",  # issue 29: chapter 19, the length vLLM derives
    "VLLM_DYNAMIC_COMMITS",  # issue 29: chapter 19, the vLLM commits read
    "stale_cache_roles",  # issue 29: chapter 19, what a stale cache does to each new token
    "STALE_ROLES",  # issue 29: chapter 19
    "prediction_entropy",  # issue 29: chapter 19, a layout check without labels
    "cache_positions",  # issue 29: chapter 19, cache slots against position_ids
    "alibi_key_bias",  # issue 29: chapter 19, ALiBi under padding (BLOOM counts tokens, MPT slots)
    "ALIBI_COUNTS",  # issue 29: chapter 19
    "sliding_window_slots",  # issue 29: chapter 19, ring-buffer and shifting caches
    "SLIDING_LAYOUTS",  # issue 29: chapter 19
    "context_shift",  # issue 29: chapter 19, llama.cpp's n_keep and n_discard
    "prefix_cache_hit",  # issue 29: chapter 19, prefix caching reuses keys at the same positions only
    "sink_cache_positions",  # issue 29: chapter 19, StreamingLLM counts positions in its cache
    "SINK_CACHE_ENGINES",  # issue 29: chapter 19, StreamingLLM's own code or transformers' SinkCache
    "mrope_video_positions",  # issue 29: chapter 19, Qwen2.5-VL video time positions (PRs 45400, 48669)
    "VIDEO_TIME_RULES",  # issue 29: chapter 19
    "prefill_chunk",  # issue 29: chapter 19, chunked prefill: positions and mask of one chunk
    "prefill_chunk_bounds",  # issue 29: chapter 19
    "speculative_round",  # issue 29: chapter 19, positions run and keys cropped in one round
    "speculative_draft_round",  # issue 29: chapter 19, the draft model's positions and cache crop
]


@pytest.mark.parametrize("name", PUBLIC + ADDED)
def test_each_public_name_is_the_object_its_subpackage_defines(name):
    obj = getattr(pe_lib, name)
    assert not isinstance(obj, types.ModuleType), f"pe_lib.{name} is a module, not the function or constant"
    owners = [sub for sub in SUBPACKAGES if name in importlib.import_module(f"pe_lib.{sub}").__all__]
    assert len(owners) == 1, f"{name} is exported by {owners}"
    if callable(obj) and hasattr(obj, "__module__"):
        assert obj.__module__.startswith(f"pe_lib.{owners[0]}."), (name, obj.__module__, owners)


def test_every_module_lives_in_a_subpackage_whose_docstring_names_its_chapters():
    root = pathlib.Path(pe_lib.__file__).parent
    assert sorted(p.name for p in root.glob("*.py")) == ["__init__.py", "_validate.py"]
    assert sorted(p.name for p in root.iterdir() if p.is_dir() and p.name != "__pycache__") == list(SUBPACKAGES)
    for sub in SUBPACKAGES:
        doc = importlib.import_module(f"pe_lib.{sub}").__doc__
        assert doc and len(doc.strip().splitlines()) == 3, f"pe_lib.{sub}: a three-line docstring"
        assert "hapter" in doc or "JAX" in doc, f"pe_lib.{sub}'s docstring should say which chapters use it"


def test_import_pe_lib_loads_no_training_library():
    code = "import sys, pe_lib; print(sorted(m for m in ('jax', 'jaxlib', 'optax') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
