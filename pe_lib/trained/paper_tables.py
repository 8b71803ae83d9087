r"""The papers' own numbers beside chapter 20's runs: a few rows of Press et al.'s and Haviv et al.'s tables.

Every number is the perplexity the paper prints (validation set, lower is better), copied from the arXiv
v2 PDFs and checked against their extracted text by ``tests/trained/test_paper_tables.py``:

* :data:`PRESS_TABLE_2` and :data:`PRESS_TABLE_3` -- Press, Smith & Lewis (2022), appendix Tables 2 and 3
  (pages 16-17): WikiText-103, non-overlapping evaluation, models trained on :math:`L` = 512 and 1024
  tokens and evaluated on inputs of the length given (only the rows nearest to 1, 2, 4 and 8 times
  :math:`L` are kept);
* :data:`HAVIV_TABLE_1` and :data:`HAVIV_TABLE_2` -- Haviv, Ram, Press, Izsak & Levy (2022), Tables 1 and
  2 (page 3): causal language models with and without position encodings, on WikiText-103 (512 tokens)
  and the Pile (1024 tokens), and on the Pile by model size.

A perplexity :math:`\mathrm{PPL}` is :math:`2^{b}` for a cross-entropy of :math:`b` bits per token, so
:func:`bits_change` turns two perplexities into a difference of bits per token, the unit of chapter 20's
bits per character (tokens there are characters; here they are words and pieces of words, so only the
sign and the relative size of a change can be compared, not the amounts).
"""

from __future__ import annotations

import numpy as np

from .._validate import check_finite_array

# columns of Press et al.'s Tables 2-3, with the names chapter 20 uses for the schemes
PRESS_COLUMNS = ("sinusoidal", "rope", "t5", "alibi")  # their "Sinusoidal", "Rotary", "T5 Bias", "ALiBi"
PRESS_TABLE_2 = {  # trained on L = 512; {evaluation length: perplexities in PRESS_COLUMNS order}
    512: (20.05, 20.07, 19.65, 19.73),
    1012: (43.54, 21.37, 18.79, 18.73),
    2512: (132.41, 31.58, 20.41, 18.41),
    4512: (209.37, 39.15, 25.91, 18.41),
}
PRESS_TABLE_3 = {  # trained on L = 1024
    1024: (19.34, 19.33, 18.80, 18.66),
    2024: (51.09, 31.17, 18.34, 18.05),
    4024: (144.00, 44.30, 19.44, 17.95),
    8024: (284.88, 64.91, 25.79, 17.96),
}
HAVIV_COLUMNS = ("none", "learned", "sinusoidal", "alibi")  # their "NoPos", "Learned", "Sinusoidal", "ALiBi"
HAVIV_TABLE_1 = {  # {setting: perplexities in HAVIV_COLUMNS order}
    "WikiText-103, 512 tokens": (20.97, 20.42, 20.16, 19.71),
    "the Pile, 1.3B, 1024 tokens": (13.10, 13.05, 12.93, 12.51),
}
HAVIV_TABLE_2 = {  # the Pile, 1024 tokens, by number of parameters
    "125M": (22.15, 22.04, 21.49, 19.94),
    "350M": (16.87, 16.84, 16.58, 15.66),
    "760M": (14.29, 14.21, 14.04, 13.53),
    "1.3B": (13.10, 13.05, 12.93, 12.51),
}


def bits_change(perplexity, reference) -> np.ndarray:
    r"""The change in cross-entropy, in bits per token, from perplexity ``reference`` to ``perplexity``:
    :math:`\log_2 \mathrm{PPL} - \log_2 \mathrm{PPL}_\mathrm{ref}` (positive: worse). Arrays broadcast;
    every perplexity must be at least 1. Returns float64 of the broadcast shape."""
    perplexity = check_finite_array(perplexity, name="perplexity")
    reference = check_finite_array(reference, name="reference")
    for name, value in (("perplexity", perplexity), ("reference", reference)):
        if np.any(value < 1):
            raise ValueError(f"{name} must be a perplexity, at least 1 (2 to the bits per token), got {value.min()}")
    return np.log2(perplexity) - np.log2(reference)
