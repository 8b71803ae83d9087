r"""Resizing a learned 2-D position table to a new patch grid, as ViT fine-tuning code does.

A ViT trained on 224-pixel images with 16-pixel patches has a table of 14 x 14 learned position
vectors; at 384 pixels the grid is 24 x 24. DeiT, MAE and timm reshape the table into an image with
``d_model`` channels and resize it with ``torch.nn.functional.interpolate(..., mode="bicubic",
align_corners=False)``. This module does the same separable resampling in numpy:

* output index ``o`` of an axis resized from ``n`` to ``m`` samples reads the input at
  :math:`x = (o + \tfrac12)\,n/m - \tfrac12` (``align_corners=False``: pixel centres line up);
* ``"bicubic"``: the four samples around :math:`x` weighted by Keys' cubic convolution kernel with
  :math:`a = -0.75` (PyTorch's choice), indices beyond the edge clamped to the edge;
* ``"bilinear"``: the two samples around :math:`\max(x, 0)`, weighted linearly.

``make reference`` checks :func:`resample_grid` against PyTorch's ``interpolate`` (bicubic and bilinear,
square and non-square grids, up and down) and transformers' ViT ``interpolate_pos_encoding``: in float64
they agree within 1e-12 of the largest value (the differences are a few 1e-15), in float32 to float32
rounding.

timm's ``resample_abs_pos_embed`` passes ``antialias=True`` by default, which makes PyTorch use
Pillow's kernel (:math:`a = -0.5`) and renormalize the weights at the edges; that variant is not
reproduced here.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_choice, check_finite_array, check_positive_int, check_table_size

RESAMPLE_METHODS = ("bicubic", "bilinear")
CUBIC_A = -0.75  # PyTorch's upsample_bicubic2d (Keys 1981 allows any a; -0.5 is Pillow's)


def cubic_kernel(x, *, a: float = CUBIC_A) -> np.ndarray:
    r"""Keys' cubic convolution kernel: :math:`(a+2)|x|^3 - (a+3)|x|^2 + 1` for :math:`|x| \le 1`,
    :math:`a|x|^3 - 5a|x|^2 + 8a|x| - 4a` for :math:`1 < |x| < 2`, 0 beyond. Same shape as ``x``."""
    t = np.abs(np.asarray(x, dtype=np.float64))
    near = ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0  # |x| <= 1
    far = ((a * t - 5.0 * a) * t + 8.0 * a) * t - 4.0 * a  # 1 < |x| < 2
    return np.where(t <= 1.0, near, np.where(t < 2.0, far, 0.0))


def resample_weights(n_in: int, n_out: int, *, method: str = "bicubic") -> np.ndarray:
    r"""The matrix ``W`` of shape ``(n_out, n_in)`` with ``W @ v`` = ``v`` resized to ``n_out`` samples.

    Row ``o`` holds the weights of the input samples for output ``o`` (see the module docstring);
    every row sums to 1.
    """
    n_in = check_positive_int(n_in, name="n_in")
    n_out = check_positive_int(n_out, name="n_out")
    method = check_choice(method, RESAMPLE_METHODS, name="method")
    x = (np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5  # source coordinate of each output sample
    w = np.zeros((n_out, n_in))
    rows = np.arange(n_out)
    if method == "bilinear":
        x = np.maximum(x, 0.0)
        left = np.floor(x).astype(int)
        frac = x - left
        np.add.at(w, (rows, left), 1.0 - frac)
        np.add.at(w, (rows, np.minimum(left + 1, n_in - 1)), frac)
        return w
    left = np.floor(x).astype(int)
    frac = x - left
    for tap in (-1, 0, 1, 2):  # the four samples around x, clamped to the edge
        np.add.at(w, (rows, np.clip(left + tap, 0, n_in - 1)), cubic_kernel(frac - tap))
    return w


def resample_grid(table, old_size: tuple[int, int], new_size: tuple[int, int], *,
                  method: str = "bicubic") -> np.ndarray:
    r"""Resize a row-major 2-D position table from ``old_size`` = (h, w) to ``new_size`` = (h', w').

    ``table``: shape ``(h * w, d)``, row ``i * w + j`` for the patch in row ``i`` and column ``j`` (drop any
    class token first). Each channel is resized as an ``h`` x ``w`` image, separably:
    :math:`T'[a, b] = \sum_{i, j} W^{(h)}_{a i}\, W^{(w)}_{b j}\, T[i, j]` with the weights of
    :func:`resample_weights` (bicubic, ``align_corners=False``, as DeiT/MAE call PyTorch's ``interpolate``).
    Returns float64 of shape ``(h' * w', d)``.
    """
    (h, w), (h_new, w_new) = (_check_size(old_size, name="old_size"), _check_size(new_size, name="new_size"))
    t = check_finite_array(table, name="table", ndim=2, shape_hint="(h * w, d)")
    if t.shape[0] != h * w:
        raise ValueError(f"table has {t.shape[0]} rows, but old_size {h} x {w} needs {h * w}; drop the class token")
    check_table_size(h_new * w_new, t.shape[1], what="resized table")
    grid = t.reshape(h, w, -1)  # [i, j, channel]
    w_rows, w_cols = resample_weights(h, h_new, method=method), resample_weights(w, w_new, method=method)
    out = np.einsum("ai,bj,ijc->abc", w_rows, w_cols, grid)  # T'[a, b] = sum W_ai W_bj T[i, j]
    return out.reshape(h_new * w_new, -1)


def _check_size(size, *, name: str) -> tuple[int, int]:
    if not isinstance(size, (tuple, list)) or len(size) != 2:
        raise ValueError(f"{name} must be a pair (rows, columns) such as (14, 14), got {size!r}")
    return check_positive_int(size[0], name=f"{name}[0]"), check_positive_int(size[1], name=f"{name}[1]")
