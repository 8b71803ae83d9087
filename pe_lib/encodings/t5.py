r"""T5's relative position buckets (Raffel et al. 2020): one learned scalar per head and bucket.

T5 adds to the score of query ``i`` and key ``j`` a learned number that depends only on the bucket
of the relative position :math:`r = j - i` (key position minus query position). The buckets are
exact for small distances and logarithmically wider for large ones, up to ``max_distance``; every
distance beyond that shares the last bucket.

With ``bidirectional=True`` half of the buckets are for keys after the query (:math:`r > 0`) and
half for keys at or before it; with ``bidirectional=False`` (a decoder) keys after the query all get
bucket 0. Within one direction, with ``B`` buckets, ``E = B // 2`` exact buckets and distance
:math:`a \ge 0`:

.. math::

    \mathrm{bucket}(a) = \begin{cases} a & a < E \\
    \min\!\left(B - 1,\; E + \left\lfloor \dfrac{\ln(a/E)}{\ln(\mathrm{max\_distance}/E)}\,(B - E)
    \right\rfloor\right) & a \ge E \end{cases}
"""

from __future__ import annotations

import numbers

import numpy as np

from .._validate import check_positive_int


def _check_relative_position(relative_position) -> np.ndarray:
    if isinstance(relative_position, bool) or isinstance(relative_position, (str, bytes)):
        raise ValueError(
            f"relative_position must hold integers (key position - query position), got {relative_position!r}"
        )
    if isinstance(relative_position, numbers.Integral):
        return np.asarray(int(relative_position), dtype=np.int64)
    arr = np.asarray(relative_position)
    if arr.dtype.kind not in "iu":
        raise ValueError(
            "relative_position must hold integers (key position - query position), "
            f"got an array of dtype {arr.dtype}; build it with integer numpy.arange"
        )
    return arr.astype(np.int64)


def t5_relative_bucket(
    relative_position,
    *,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
) -> np.ndarray:
    r"""The T5 bucket (an integer in ``[0, num_buckets)``) of each relative position ``j - i``.

    ``relative_position``: an int or an integer array of any shape, key position minus query position.
    ``bidirectional``: split the buckets between keys after the query (upper half) and the rest.
    ``num_buckets``: buckets in total (default 32); ``max_distance``: distance from which everything
    shares the last bucket of its direction (default 128). Returns an int64 array of the same shape.
    """
    rel = _check_relative_position(relative_position)
    if not isinstance(bidirectional, bool):
        raise ValueError(f"bidirectional must be True or False, got {bidirectional!r}")
    num_buckets = check_positive_int(num_buckets, name="num_buckets", minimum=4 if bidirectional else 2)
    if bidirectional and num_buckets % 2:
        raise ValueError(f"num_buckets must be even when bidirectional (half per direction), got {num_buckets}")
    max_distance = check_positive_int(max_distance, name="max_distance")
    per_direction = num_buckets // 2 if bidirectional else num_buckets
    exact = per_direction // 2  # E: distances 0 .. E-1 get a bucket each
    if max_distance <= exact:
        raise ValueError(
            f"max_distance must exceed the {exact} exactly-bucketed distances (num_buckets // "
            f"{4 if bidirectional else 2}), got {max_distance}"
        )
    if bidirectional:
        offset = np.where(rel > 0, per_direction, 0)  # keys after the query use the upper half
        distance = np.abs(rel)
    else:
        offset = np.zeros_like(rel)
        distance = np.maximum(-rel, 0)  # keys after the query collapse to distance 0
    # logarithmic buckets E .. per_direction-1 for distances E .. max_distance (clipped beyond)
    safe = np.maximum(distance, exact).astype(np.float64)  # avoids log(0); those entries use the exact branch
    log_ratio = np.log(safe / exact) / np.log(max_distance / exact)  # ln(a/E) / ln(max_distance/E)
    large = exact + np.floor(log_ratio * (per_direction - exact)).astype(np.int64)
    large = np.minimum(large, per_direction - 1)
    return offset + np.where(distance < exact, distance, large)
