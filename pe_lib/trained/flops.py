r"""How much arithmetic one training step of the book's Transformer is: the yardstick of ``make bench``.

A step's time alone says little across sizes; its floating-point operations per second (FLOP/s) say how
close the step comes to what the processor can do, and tokens per second what a learner waits for.
Counting a multiply-add as two operations, the forward pass of :mod:`pe_lib.trained.transformer` on a
batch of :math:`B` sequences of :math:`L` tokens, width :math:`d` (``d_model``), :math:`N` blocks and a
vocabulary of :math:`V` is dominated by its matrix products:

.. math::

    C_\mathrm{fwd} = N\,\bigl(\underbrace{2\cdot 4\,BLd^2}_{W_Q, W_K, W_V, W_O}
                     + \underbrace{2\cdot 2\,BLd\,d_\mathrm{ff}}_{\text{MLP}}
                     + \underbrace{2\cdot 2\,BL^2 d}_{q k^\top,\ a v}\bigr)
                     + \underbrace{2\,BLdV}_{W_U},
    \qquad d_\mathrm{ff} = 4d,

with no saving for the causal mask: the book's model computes every score and masks it afterwards.
Layer norms, softmax, ReLU, RoPE's rotation, the embedding lookup and Adam's update are :math:`O(BLd)` or
:math:`O(\text{parameters})`: left out, as is usual (XLA's own count, which includes them, is 1.5-11% higher
at the book's sizes). The backward pass of a matrix product is two products of the same size (one gives the
gradient of its input, one of its weights), so a step is :math:`C_\mathrm{step} = 3\,C_\mathrm{fwd}` (the
gradient of the first layer's input, which nothing needs, is counted too: the usual convention).
``tests/trained/test_flops.py`` checks the count against the operations XLA itself reports for the compiled
forward pass and step.
"""

from __future__ import annotations

from .._validate import check_positive_int


def forward_flops(*, d_model: int, n_layers: int, seq_len: int, batch_size: int, vocab_size: int) -> int:
    r""":math:`C_\mathrm{fwd}` of the module docstring: the floating-point operations of the matrix products of
    one forward pass over ``batch_size`` sequences of ``seq_len`` tokens (an ``int``)."""
    d = check_positive_int(d_model, name="d_model")
    n = check_positive_int(n_layers, name="n_layers")
    length = check_positive_int(seq_len, name="seq_len")
    tokens = check_positive_int(batch_size, name="batch_size") * length  # B L
    vocab = check_positive_int(vocab_size, name="vocab_size")
    d_ff = 4 * d
    projections = 2 * 4 * tokens * d * d  # W_Q, W_K, W_V and W_O: 2 B L d^2 each
    mlp = 2 * 2 * tokens * d * d_ff  # W_1 and W_2: 2 B L d d_ff each
    attention = 2 * 2 * tokens * length * d  # q k^T and a v, over all heads: 2 B L^2 d each
    return n * (projections + mlp + attention) + 2 * tokens * d * vocab  # + W_U


def step_flops(**sizes) -> int:
    r""":math:`C_\mathrm{step} = 3\,C_\mathrm{fwd}`: one training step (forward and backward pass) of
    :func:`forward_flops` with the same keyword arguments (an ``int``)."""
    return 3 * forward_flops(**sizes)
