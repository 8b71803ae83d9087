"""pe_lib: the small, tested library behind *Positional Encoding, Explained and Verified*.

One module per idea; every function validates its arguments and documents its formula and
the shape of what it returns.
"""

from .attention import attention_weights, causal_mask, self_attention, softmax
from .frequencies import frequencies, wavelengths
from .linear_fit import fit_linear_map, r_squared
from .shift import apply_shift, shift_matrix
from .similarity import dot_profile
from .sinusoidal import sinusoidal, sinusoidal_loop

__all__ = [
    "apply_shift",
    "attention_weights",
    "causal_mask",
    "dot_profile",
    "fit_linear_map",
    "frequencies",
    "r_squared",
    "self_attention",
    "shift_matrix",
    "sinusoidal",
    "sinusoidal_loop",
    "softmax",
    "wavelengths",
]
