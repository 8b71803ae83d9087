r"""Converted checkpoints whose position convention is off: what the wrong code computes, and a detector.

**RoPE layout.** An implementation of layout :math:`L` rotates pair :math:`i` (frequency
:math:`\omega_i`) made of the columns :math:`(a_L(i), b_L(i))` of a head's query and key:
interleaved :math:`(2i, 2i+1)` (Meta's LLaMA code, GPT-J), split :math:`(i, i + d_k/2)`
(``rotate_half``: GPT-NeoX, transformers). Weights trained for one layout and run by the other's
code without permuting the q/k projections pair the wrong columns: the model still runs, and
computes something else. transformers' LLaMA converter permutes them for this reason (transformers
issue 25199). :func:`layout_misread_permutation` says which weights the right code would need to
compute what the wrong code computes, so the damage can be measured on a model of one layout.

**Timestep convention.** A diffusion model's timestep embedding (:func:`pe_lib.timestep_embedding`)
comes in four common conventions: sines or cosines first (``flip_sin_to_cos``) and
``downscale_freq_shift`` 0 or 1. :func:`timestep_convention_match` correlates a table produced by
the original code with each convention's table.

Numpy only.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_choice, check_d_model, check_finite_array, check_finite_real
from .timestep import timestep_embedding

ROPE_LAYOUTS = ("interleaved", "split")
TIMESTEP_CONVENTIONS = (  # (flip_sin_to_cos, downscale_freq_shift)
    (False, 1.0),  # diffusers' defaults, DDPM
    (False, 0.0),
    (True, 1.0),
    (True, 0.0),  # ADM (guided-diffusion), Stable Diffusion XL
)


def _pair_order(d_k: int, layout: str) -> np.ndarray:
    """Columns of the pairs' first members, then of their second members: ``[a(0..h-1), b(0..h-1)]``."""
    if layout == "interleaved":
        return np.concatenate([np.arange(0, d_k, 2), np.arange(1, d_k, 2)])  # a = 2i, b = 2i + 1
    return np.arange(d_k)  # split: a = i, b = i + d_k/2


def layout_misread_permutation(d_k: int, *, stored: str, read_as: str) -> np.ndarray:
    r"""Column indices ``p`` (``(d_k,)`` ints): code of layout ``read_as`` running q/k weights ``W``
    trained for layout ``stored`` computes the same scores as code of layout ``stored`` running ``W[..., p]``.

    Code of layout :math:`R` rotates the columns :math:`(a_R(i), b_R(i))` together by
    :math:`m\,\omega_i`; code of layout :math:`S` the columns :math:`(a_S(i), b_S(i))`. They agree
    when :math:`p[a_S(i)] = a_R(i)` and :math:`p[b_S(i)] = b_R(i)`, i.e.
    :math:`p[\text{order}_S] = \text{order}_R` with :math:`\text{order}_L = [a_L(0..h-1), b_L(0..h-1)]`.
    stored interleaved, read as split: ``p = [0, h, 1, h+1, ...]`` (:math:`h = d_k/2`); the same layout:
    the identity. Layouts: ``"interleaved"`` (:math:`a = 2i, b = 2i+1`), ``"split"`` (:math:`a = i,
    b = i + h`). Returns an int array of shape ``(d_k,)``.
    """
    d_k = check_d_model(d_k, name="d_k")
    stored = check_choice(stored, ROPE_LAYOUTS, name="stored")
    read_as = check_choice(read_as, ROPE_LAYOUTS, name="read_as")
    p = np.empty(d_k, dtype=np.int64)
    p[_pair_order(d_k, stored)] = _pair_order(d_k, read_as)
    return p


def timestep_convention_match(table, timesteps, *, max_period: float = 10_000) -> dict:
    r"""Pearson correlation of ``table`` (``(n, dim)``: embeddings of ``timesteps`` made by some code)
    with each convention's table, :func:`pe_lib.timestep_embedding` ``(timesteps, dim,
    flip_sin_to_cos=f, downscale_freq_shift=s)`` for the four ``(f, s)`` of
    :data:`TIMESTEP_CONVENTIONS`. Correlation over all :math:`n \cdot \text{dim}` entries,
    :math:`\rho = \frac{\sum (x - \bar x)(y - \bar y)}{\sqrt{\sum (x - \bar x)^2 \sum (y - \bar y)^2}}`;
    the convention with :math:`\rho = 1` is the one the code used. Returns ``{(f, s): rho}``.
    """
    t = check_finite_array(timesteps, name="timesteps", ndim=1, shape_hint="(n,): one timestep per row of table")
    table = check_finite_array(table, name="table", ndim=2, shape_hint="(n, dim)")
    max_period = check_finite_real(max_period, name="max_period")
    if table.shape[0] != t.size or table.shape[1] < 4:
        raise ValueError(f"table must have one row per timestep ({t.size}) and at least 4 columns, "
                         f"got shape {table.shape}")
    x = table.ravel() - table.mean()
    if not np.any(x):
        raise ValueError("table is constant: no convention can be told from it")
    scores = {}
    for flip, shift in TIMESTEP_CONVENTIONS:
        y = timestep_embedding(t, table.shape[1], max_period=max_period, flip_sin_to_cos=flip,
                               downscale_freq_shift=shift).ravel()
        y = y - y.mean()
        scores[(flip, shift)] = float(x @ y / np.sqrt((x @ x) * (y @ y)))
    return scores


def permuted_qk(blocks, perm) -> list[dict]:
    r"""The layer blocks of a model (a list of dicts of arrays, as ``model.params["blocks"]`` of
    :func:`pe_lib.train_transformer`) with the last axis of every head's query and key weights,
    ``w_q`` and ``w_k`` (``(n_heads, d_model, d_k)``), reordered by ``perm``: :math:`W_Q[..., p]`,
    :math:`W_K[..., p]`. Everything else is shared, not copied. With ``perm`` from
    :func:`layout_misread_permutation` this is the checkpoint as the wrong layout's code reads it.
    Returns a new list of new dicts.
    """
    if not isinstance(blocks, (list, tuple)) or not blocks or not all(isinstance(b, dict) for b in blocks):
        raise ValueError("blocks must be a non-empty list of dicts (model.params['blocks']), "
                         f"got {type(blocks).__name__}")
    if not all("w_q" in b and "w_k" in b for b in blocks):
        raise ValueError("every block must hold the query and key weights 'w_q' and 'w_k'")
    d_k = np.shape(blocks[0]["w_q"])[-1]
    perm = np.asarray(perm)
    if perm.shape != (d_k,) or not np.issubdtype(perm.dtype, np.integer) or sorted(perm.tolist()) != list(range(d_k)):
        raise ValueError(f"perm must be a permutation of 0 .. {d_k - 1} (one index per column of a head), got {perm!r}")
    return [dict(b, w_q=np.asarray(b["w_q"])[..., perm], w_k=np.asarray(b["w_k"])[..., perm]) for b in blocks]
