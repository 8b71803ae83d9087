r"""How sure a model is of its next token, without labels: a check that needs no task.

The mean entropy of the predicted distributions,

.. math::

    \bar H = \frac{1}{N} \sum_{n} -\sum_{v} p_{n,v} \ln p_{n,v}, \qquad p_{n,\cdot} = \mathrm{softmax}(z_{n,\cdot}),

over any inputs, with no target: a model read with the wrong convention (a RoPE layout, a position
offset) computes something it was not trained to compute and is, as a rule, less sure of it. Chapter 19
uses it to choose between two readings of a checkpoint on random token sequences, where the held-out
loss would need the task's labels. It is a heuristic: a model can be confidently wrong, so a small
entropy alone proves nothing; the gap between two readings is what is read.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_finite_array


def prediction_entropy(logits) -> float:
    r"""The mean entropy :math:`\bar H` (nats) of ``softmax(logits)`` over the last axis.

    ``logits``: finite reals of shape ``(..., V)`` with ``V >= 2`` (the vocabulary). Computed stably as
    :math:`H = \log\sum_v e^{z_v - m} - \sum_v p_v (z_v - m)`, :math:`m = \max_v z_v`.
    Returns a float in :math:`[0, \ln V]`.
    """
    z = check_finite_array(logits, name="logits", min_ndim=1, shape_hint="(..., V)")
    if z.shape[-1] < 2:
        raise ValueError(f"logits need at least 2 entries on the last axis (the vocabulary), got shape {z.shape}")
    z = z - z.max(axis=-1, keepdims=True)  # z_v - m <= 0
    weights = np.exp(z)
    total = weights.sum(axis=-1)
    p = weights / total[..., None]
    entropy = np.log(total) - (p * z).sum(axis=-1)
    return float(np.clip(entropy, 0.0, None).mean())
