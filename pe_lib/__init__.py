"""pe_lib: the small, tested library behind *Positional Encoding, Explained and Verified*.

One module per idea; every function validates its arguments and documents its formula and
the shape of what it returns.
"""

from .frequencies import frequencies, wavelengths
from .shift import apply_shift, shift_matrix
from .sinusoidal import sinusoidal, sinusoidal_loop

__all__ = [
    "apply_shift",
    "frequencies",
    "shift_matrix",
    "sinusoidal",
    "sinusoidal_loop",
    "wavelengths",
]
