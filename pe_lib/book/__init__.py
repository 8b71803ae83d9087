"""The book's own machinery: pe_lib.show (a figure with its alt text and digest, as every chapter
stores it), the training progress line, and number formatting for the prose.
Used by every chapter; change it only together with the website (tests/browser).
"""

from .figures import figure_digest, show, shown
from .numbers import magnitude_text, seed_table
from .rounding import below

__all__ = [
    "below",
    "figure_digest",
    "magnitude_text",
    "seed_table",
    "show",
    "shown",
]
