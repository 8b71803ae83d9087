r"""How real implementations of the sinusoidal encoding differ from the paper, and from each other.

* **Layout.** ``"interleaved"`` (sin, cos, sin, cos, ...), ``"split"`` (all sines, then all
  cosines) or ``"cos-first"`` (all cosines, then all sines, as in DiT's timestep embedding): fixed
  permutations of the columns, see :func:`layout_permutation`. A model whose every residual
  coordinate is permuted the same way computes the same thing, see :func:`permuted_blocks`.
* **Frequencies.** ``convention="paper"`` or ``"tensor2tensor"`` (:func:`pe_lib.frequencies`).
* **First position.** fairseq numbers real tokens from ``padding_idx + 1`` and zeroes the padding
  row (:func:`fairseq_sinusoidal`, :func:`fairseq_positions`).
* **A historic bug.** Letting the pair index run over all ``d_model`` columns
  (:func:`buggy_sinusoidal`): the sine and the cosine of a "pair" get different frequencies.
* **Precision.** See :mod:`pe_lib.precision`.

:data:`IMPLEMENTATIONS` records, for the implementations compared in chapter 11, the ``pe_lib``
parameters that reproduce each one, and :func:`implementation_table` builds its table.
"""

from __future__ import annotations

import numpy as np

from .._validate import (
    check_base,
    check_choice,
    check_d_model,
    check_positions,
    check_positive_int,
    check_table_size,
)
from ..numpy_model.layers import BLOCK_KEYS
from .sinusoidal import LAYOUTS, sinusoidal

# the layouts of pe_lib.sinusoidal, and [cos | sin] (DiT's timestep embedding, from GLIDE/ADM)
VARIANT_LAYOUTS = (*LAYOUTS, "cos-first")


def _order(d_model: int, layout: str) -> np.ndarray:
    """Columns of the interleaved table, in the order ``layout`` stores them."""
    sines, cosines = np.arange(0, d_model, 2), np.arange(1, d_model, 2)  # columns 2k and 2k+1
    if layout == "interleaved":
        return np.arange(d_model)
    if layout == "split":
        return np.concatenate([sines, cosines])  # [sin w_0 .. sin w_{h-1}, cos w_0 .. cos w_{h-1}]
    return np.concatenate([cosines, sines])  # cos-first: [cos w_0 .. cos w_{h-1}, sin w_0 .. sin w_{h-1}]


def layout_permutation(d_model: int, *, source: str = "interleaved", target: str = "split") -> np.ndarray:
    r"""Column indices ``perm`` with ``table_target == table_source[:, perm]``.

    Layouts: ``"interleaved"``, ``"split"`` (``[sin | cos]``) and ``"cos-first"`` (``[cos | sin]``).
    interleaved → split: ``perm = [0, 2, 4, ..., d-2, 1, 3, ..., d-1]`` (sines first);
    interleaved → cos-first: ``[1, 3, ..., d-1, 0, 2, ..., d-2]``; split → interleaved: the inverse of
    the first, ``[0, d/2, 1, d/2+1, ...]``; same → same: the identity. In general
    ``perm = inverse(order_source)[order_target]``, where ``order_L`` lists the interleaved columns in
    the order layout ``L`` stores them. Returns an int array of shape ``(d_model,)``.
    """
    d_model = check_d_model(d_model)
    source = check_choice(source, VARIANT_LAYOUTS, name="source")
    target = check_choice(target, VARIANT_LAYOUTS, name="target")
    # table_L = interleaved[:, order_L], so table_target = table_source[:, argsort(order_source)[order_target]]
    return np.argsort(_order(d_model, source))[_order(d_model, target)]


def permuted_blocks(blocks, perm) -> list[dict[str, np.ndarray]]:
    r"""The blocks of :func:`pe_lib.init_blocks` with every residual coordinate renumbered by ``perm``.

    With :math:`P` = :func:`permutation_matrix` ``(perm)``, every weight that reads the residual stream
    gets its rows permuted, :math:`P^\top W` (``W[perm]``: ``w_q``, ``w_k``, ``w_v`` of every head, ``w_1``),
    and every weight or bias that writes into it its columns, :math:`W P` (``w_o``, ``w_2``, ``b_2``).
    The layer norms (gain 1, bias 0) commute with :math:`P`: mean and variance do not depend on the
    order. So :func:`pe_lib.run_stack` on ``x[..., perm]`` with these blocks returns the original
    states with their last axis permuted, ``states[..., perm]``, at every layer, with or without
    residual connections, pre- or post-LN, causal or not. Returns a new list of new dicts.
    """
    perm = np.asarray(perm)
    permutation_matrix(perm)  # validates perm
    out = []
    for block in blocks:
        if not isinstance(block, dict) or any(key not in block for key in BLOCK_KEYS):
            raise ValueError(f"a block must be a dict with keys {', '.join(BLOCK_KEYS)} (see pe_lib.init_blocks)")
        if block["w_o"].shape[0] != perm.size:
            raise ValueError(f"perm has {perm.size} entries, but the block is for d_model={block['w_o'].shape[0]}")
        out.append({
            "w_q": block["w_q"][:, perm, :], "w_k": block["w_k"][:, perm, :], "w_v": block["w_v"][:, perm, :],
            "w_1": block["w_1"][perm], "b_1": block["b_1"].copy(),  # read the stream: P^T W
            "w_o": block["w_o"][:, perm], "w_2": block["w_2"][:, perm], "b_2": block["b_2"][perm],  # write: W P
        })
    return out


def permutation_matrix(perm) -> np.ndarray:
    r"""The matrix ``P`` with ``x @ P == x[..., perm]``: :math:`P_{\mathrm{perm}[j],\,j} = 1`.

    ``P`` is orthogonal (:math:`P P^\top = I`), so a first layer ``W`` fed ``x @ P`` computes the same
    as before if it is replaced by :math:`P^\top W` (``W[perm]``: its rows permuted the same way).
    Returns float64 of shape ``(d, d)``.
    """
    perm = np.asarray(perm)
    d = perm.size
    if perm.ndim != 1 or perm.dtype.kind not in "iu" or not np.array_equal(np.sort(perm), np.arange(d)):
        raise ValueError(f"perm must be a permutation of 0 .. d-1 as a 1-D integer array, got {perm!r}")
    p = np.zeros((d, d))
    p[perm, np.arange(d)] = 1.0  # column j picks input column perm[j]
    return p


def fairseq_sinusoidal(num_embeddings: int, d_model: int, padding_idx: int | None = None, *,
                       base: float = 10_000.0, dtype=np.float32) -> np.ndarray:
    r"""The table of fairseq's ``SinusoidalPositionalEmbedding``, rebuilt from its description.

    Row ``r`` (``r = 0 .. num_embeddings-1``) encodes position ``r`` with the tensor2tensor
    frequencies :math:`\omega_k = \mathrm{base}^{-k/(d/2-1)}` in the split layout
    ``[sin(r ω_0) .. sin(r ω_{d/2-1}), cos(r ω_0) .. cos(r ω_{d/2-1})]``, computed in ``dtype``
    (float32, like the PyTorch default); row ``padding_idx`` (if given) is all zeros. Real tokens are
    looked up at rows ``padding_idx + 1, padding_idx + 2, ...`` (:func:`fairseq_positions`).
    Returns shape ``(num_embeddings, d_model)``.
    """
    num_embeddings = check_positive_int(num_embeddings, name="num_embeddings")
    table = sinusoidal(num_embeddings, d_model, base=base, layout="split", convention="tensor2tensor", dtype=dtype)
    if padding_idx is not None:
        padding_idx = check_positive_int(padding_idx, name="padding_idx", minimum=0)
        if padding_idx >= num_embeddings:
            raise ValueError(f"padding_idx must be a row of the table (< num_embeddings={num_embeddings}), "
                             f"got {padding_idx}")
        table[padding_idx] = 0.0  # the padding row carries no position
    return table


def fairseq_positions(tokens, padding_idx: int) -> np.ndarray:
    r"""Row of :func:`fairseq_sinusoidal` used by each token: ``padding_idx`` for padding tokens,
    ``padding_idx + c`` for the ``c``-th non-padding token of its sequence (``c = 1, 2, ...``).

    ``tokens``: int array of shape ``(L,)`` or ``(batch, L)``; positions count along the last axis.
    Returns an int64 array of the same shape.
    """
    padding_idx = check_positive_int(padding_idx, name="padding_idx", minimum=0)
    tokens = np.asarray(tokens)
    if tokens.dtype.kind not in "iu" or tokens.ndim not in (1, 2):
        raise ValueError(f"tokens must be a 1-D or 2-D array of integer token ids, got dtype {tokens.dtype} "
                         f"and shape {tokens.shape}")
    real = tokens != padding_idx
    count = np.cumsum(real, axis=-1)  # c = number of real tokens so far, this one included
    return (count * real + padding_idx).astype(np.int64)  # padding -> padding_idx, real -> padding_idx + c


def buggy_sinusoidal(positions, d_model: int, *, base: float = 10_000.0) -> np.ndarray:
    r"""The encoding with the pair index run over all ``d_model`` columns — a historic bug.

    Column ``j`` (``0 <= j < d_model``) gets its own frequency :math:`\mathrm{base}^{-2j/d}`:

    .. math::

        \mathrm{PE}(pos, j) = \sin(pos\,\mathrm{base}^{-2j/d}) \text{ for even } j, \qquad
        \mathrm{PE}(pos, j) = \cos(pos\,\mathrm{base}^{-2j/d}) \text{ for odd } j,

    so the sine in column ``2k`` and the cosine in column ``2k+1`` no longer share a frequency
    (the correct table uses ``2 * (j // 2)`` in place of ``2 j``). Returns float64 ``(n, d_model)``.
    """
    pos = check_positions(positions)
    d_model = check_d_model(d_model)
    base = check_base(base)
    check_table_size(pos.size, d_model)
    j = np.arange(d_model)
    omega = np.exp(-2.0 * j / d_model * np.log(base))  # base^(-2j/d): one frequency per column
    angle = np.multiply.outer(pos, omega)
    return np.where(j % 2 == 0, np.sin(angle), np.cos(angle))  # sin on even columns, cos on odd


# name -> how pe_lib reproduces it. "start" is the first position; "compute"/"store" the dtypes of the
# angle computation and of the stored table; "pe_lib" the call, for the chapter's table.
IMPLEMENTATIONS: dict[str, dict] = {
    "paper": dict(layout="interleaved", convention="paper", start=0, compute="float64", store="float64",
                  pe_lib="sinusoidal(n, d)"),
    "tensor2tensor": dict(layout="split", convention="tensor2tensor", start=0, compute="float32",
                          store="float32",
                          pe_lib='sinusoidal(n, d, layout="split", convention="tensor2tensor", dtype=np.float32)'),
    "fairseq": dict(layout="split", convention="tensor2tensor", start="padding_idx + 1", compute="float32",
                    store="float32", pe_lib="fairseq_sinusoidal(n + padding_idx + 1, d, padding_idx)"),
    "Marian (Hugging Face)": dict(layout="split", convention="paper", start=0, compute="float64",
                                  store="float32",
                                  pe_lib='sinusoidal(n, d, layout="split").astype(np.float32)'),
    "DistilBERT (Hugging Face)": dict(layout="interleaved", convention="paper", start=0, compute="float64",
                                      store="float32", pe_lib="sinusoidal(n, d).astype(np.float32)"),
    "PyTorch tutorial": dict(layout="interleaved", convention="paper", start=0, compute="float32",
                             store="float32", pe_lib="sinusoidal(n, d, dtype=np.float32)"),
    "Annotated Transformer": dict(layout="interleaved", convention="paper", start=0, compute="float32",
                                  store="float32", pe_lib="sinusoidal(n, d, dtype=np.float32)"),
    "d2l": dict(layout="interleaved", convention="paper", start=0, compute="float32", store="float32",
                pe_lib="sinusoidal(n, d, dtype=np.float32)"),
    "jadore801120": dict(layout="interleaved", convention="paper", start=0, compute="float64", store="float32",
                         pe_lib="sinusoidal(n, d).astype(np.float32)"),
    "jadore801120 before the fix": dict(layout="interleaved", convention="buggy", start=0, compute="float64",
                                        store="float32", pe_lib="buggy_sinusoidal(n, d).astype(np.float32)"),
    "DiT timestep embedding": dict(
        layout="cos-first", convention="paper", start=0, compute="float32", store="float32",
        pe_lib='sinusoidal(t, d, dtype=np.float32)[:, layout_permutation(d, target="cos-first")]',
    ),
}


def implementation_table(name: str, n: int, d_model: int, *, padding_idx: int = 1) -> np.ndarray:
    """The encodings of the first ``n`` real tokens as implementation ``name`` computes them.

    ``name`` is a key of :data:`IMPLEMENTATIONS`; ``padding_idx`` is used by ``"fairseq"`` only.
    Returns float64 of shape ``(n, d_model)`` (values rounded to the implementation's storage dtype).
    """
    name = check_choice(name, tuple(IMPLEMENTATIONS), name="name")
    n = check_positive_int(n, name="n", minimum=0)
    spec = IMPLEMENTATIONS[name]
    if name == "fairseq":
        table = fairseq_sinusoidal(n + padding_idx + 1, d_model, padding_idx)
        return table[padding_idx + 1:].astype(np.float64)  # real tokens: rows padding_idx+1 .. padding_idx+n
    if spec["convention"] == "buggy":
        table = buggy_sinusoidal(n, d_model)
    else:
        table = sinusoidal(n, d_model, convention=spec["convention"], dtype=np.dtype(spec["compute"]))
        table = table[:, layout_permutation(d_model, target=spec["layout"])]  # interleaved -> its layout
    return table.astype(spec["store"]).astype(np.float64)
