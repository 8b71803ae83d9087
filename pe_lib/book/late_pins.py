"""A warning when JAX started computing before ``import pe_lib``: the kernel pins come too late to act.

``import pe_lib`` sets :data:`pe_lib.book.machine.TRAINED_ENV` (oneDNN held to AVX2, XLA's CPU client on two
threads) so that a trained model has the same bits on every machine. XLA reads its thread count when it
creates the CPU client, and oneDNN its instruction set when it first runs a kernel: both happen the first
time JAX computes. A learner who ran something in JAX before importing pe_lib has a client made without
the pins, and the models trained in that process may differ from the book's in their last bits (and
after training, in the printed accuracies). Nothing in the process can undo that, so pe_lib says so
(:func:`warn_if_jax_started`, called by ``pe_lib/__init__.py`` before the pins are set).

A variable the learner set by hand, before starting Python, to the pinned value counts as pinned: then
nothing is lost and nothing is said.
"""

from __future__ import annotations

import os
import sys
import warnings

from .machine import TRAINED_ENV


def jax_started(modules=None) -> bool:
    """Whether JAX has created its backends (the CPU client) in this process, i.e. has computed something.
    ``modules`` is ``sys.modules`` by default; JAX is never imported here."""
    modules = sys.modules if modules is None else modules
    bridge = modules.get("jax._src.xla_bridge")
    started = getattr(bridge, "backends_are_initialized", None)
    return bool(started is not None and started())


def unpinned(environ=None) -> list[str]:
    """The variables of ``TRAINED_ENV`` that ``environ`` (default ``os.environ``) does not hold at their
    pinned value, in ``TRAINED_ENV``'s order."""
    environ = os.environ if environ is None else environ
    return [name for name, value in TRAINED_ENV.items() if environ.get(name) != value]


def warn_if_jax_started(environ=None, modules=None) -> list[str]:
    """Warn (``RuntimeWarning``) if JAX computed before the pins were set and some variable of ``TRAINED_ENV``
    was not already at its pinned value; returns those variables (empty: nothing to say)."""
    missing = unpinned(environ) if jax_started(modules) else []
    if missing:
        settings = " ".join(f"{name}={TRAINED_ENV[name]}" for name in missing)
        warnings.warn(
            "JAX computed something before `import pe_lib`, so pe_lib's kernel settings cannot act in this "
            f"process ({settings} were not set before JAX started): models trained here may differ from the book's in "
            "their last bits. Restart the kernel and import pe_lib before running anything in JAX, or set "
            "those variables before starting Python.",
            RuntimeWarning, stacklevel=3)
    return missing
