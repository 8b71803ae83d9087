"""The same printed digits on every x86 processor: numpy's vectorized loops and oneDNN capped at AVX2.

numpy picks its SIMD kernels for ``exp``, ``log``, ``sin``, ``power``... at import time from what the
processor offers, and its AVX-512 kernels round some results differently in the last bit from its
AVX2 kernels. Most chapters never print so many digits, but a few outputs do: on an AVX-512 machine
chapter 3 counts 214 frequencies that differ from ``10000 ** (-2k/d)`` instead of 216, and chapter 7's
stack of twelve layers amplifies the last bits into its third decimal. nbval compares every printed
digit, so the book's outputs are made, and checked, with numpy's AVX-512 kernels switched off
(``NPY_DISABLE_CPU_FEATURES``, read when numpy is imported): the same kernels as on any AVX2 machine.
The trained models cap XLA the same way (``pe_lib.trained.training.X86_MAX_ISA``), and the oneDNN
library that XLA calls for matrix products chooses its kernels by processor too: on an AVX-512
machine a trained model's weights differ in the last bits from an AVX2 machine's, and training
amplifies that into the printed accuracies (tenths of a point). :data:`ONEDNN_ENV` holds it to AVX2,
the instruction set of every x86-64 processor since 2013; :func:`pin_onednn` sets it in this process
before JAX first computes (``pe_lib.trained`` calls it), so a learner's kernel gets it too.

OpenBLAS, which numpy's matrix products call, picks its kernels by processor as well, and there is no
setting a process can make for itself (it is read when numpy is loaded). The book does not pin it:
no printed digit depends on it (a rounding-level difference is printed as a bound), and
``make kernels`` (``tools/kernel_check.py``, part of ``make test``) re-runs the chapters under other
OpenBLAS kernels to prove it.

``make`` exports the settings to every command; :data:`KERNEL_ENV` is the same for the tools
that start kernels themselves (``tools/execute.py``, nbval through ``tests/conftest.py``). Features a
processor lacks are ignored, so the setting is harmless on ARM and older x86.
"""

import os

NUMPY_ENV = {"NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR"}
# oneDNN reads either name (its older one first); held to AVX2 on every x86 processor
ONEDNN_ENV = {"DNNL_MAX_CPU_ISA": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"}
KERNEL_ENV = {**NUMPY_ENV, **ONEDNN_ENV}


def pin_onednn(environ=None) -> dict:
    """Set :data:`ONEDNN_ENV` in ``environ`` (default ``os.environ``) where it is not set already.

    oneDNN reads the variables when it first runs a kernel, so this must run before JAX computes
    anything; a value set by hand is kept. Returns the variables as they now are.
    """
    environ = os.environ if environ is None else environ
    for name, value in ONEDNN_ENV.items():
        environ.setdefault(name, value)
    return {name: environ[name] for name in ONEDNN_ENV}
