"""pe_lib: the small, tested library behind *Positional Encoding, Explained and Verified*.

The folders follow the book; each has one module per idea, and every function validates its
arguments and documents its formula and the shape of what it returns::

    encodings/    the formulas: sinusoidal table, frequencies, shift, RoPE, ALiBi, T5, precision, variants
    numpy_model/  the numpy Transformer of chapter 7 (attention, layers)
    analysis/     similarity, embeddings, attention by offset, probes, fits, the choice of the base
    modern/       today's models: rope_scaling, context extension, timesteps, grids, M-RoPE, resampling
    trained/      the JAX models of chapters 14-16: model, tasks, training, runs, analysis
    drawing/      plots, the clock and its player, the explorers (matplotlib and ipywidgets live here)
    book/         the book's machinery: pe_lib.show, progress lines, number formatting
    _validate.py  the argument checks every module shares

Imports run downward only (``make lint`` checks it with import-linter): drawing and trained use
analysis, modern, encodings and the numpy model; none of those imports matplotlib, ipywidgets or
JAX. Every public function is importable from the top: ``pe_lib.sinusoidal``, ``pe_lib.rope``, ...
"""

from .book.late_pins import warn_if_jax_started

# before pe_lib.trained pins oneDNN and XLA's threads: too late if JAX has already computed (a warning then)
warn_if_jax_started()

from . import analysis, book, drawing, encodings, modern, numpy_model, trained
from .analysis import *  # noqa: F403
from .book import *  # noqa: F403
from .drawing import *  # noqa: F403
from .encodings import *  # noqa: F403
from .modern import *  # noqa: F403
from .numpy_model import *  # noqa: F403
from .trained import *  # noqa: F403

__all__ = sorted(
    {
        *analysis.__all__,
        *book.__all__,
        *drawing.__all__,
        *encodings.__all__,
        *modern.__all__,
        *numpy_model.__all__,
        *trained.__all__,
    },
    key=str.lower,
)
