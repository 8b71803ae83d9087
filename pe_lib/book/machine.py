"""The same printed digits on every x86 processor: numpy's loops and oneDNN capped at AVX2, XLA on two threads.

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
the instruction set of every x86-64 processor since 2013. XLA also splits a matrix product over the
threads of its CPU client, one per core it may use, and the split changes the order of the sums: one
core (``taskset -c 0``) trains other weights than two. :data:`THREAD_ENV` gives the client two threads
on every machine (``PJRT_NPROC``, which XLA's CPU client reads instead of counting cores; measured: two
threads on one core train the same bits as on two). :func:`pin_trained_kernels` sets both in this
process before JAX first computes (``pe_lib.trained`` calls it), so a learner's kernel gets them too.
On a processor with many cores the trained chapters then use two of them for XLA's work: the models
are small enough that this costs little (``make bench``).

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
# the threads of XLA's CPU client (it reads PJRT_NPROC before counting the cores it may use)
THREAD_ENV = {"PJRT_NPROC": "2"}
TRAINED_ENV = {**ONEDNN_ENV, **THREAD_ENV}
KERNEL_ENV = {**NUMPY_ENV, **TRAINED_ENV}
# make kernels sets it to run each nbval worker, and the kernels it starts, on one core (notebooks/conftest.py)
ONE_CORE_ENV = "PE_LIB_ONE_CORE_PER_WORKER"


def one_core(worker: str, cores) -> int:
    """The core for pytest-xdist worker ``worker`` (``"gw0"``, ``"gw1"``, ...) among ``cores``: the workers
    in turn, so that two workers on a two-core machine get a core each."""
    if not worker.startswith("gw") or not worker[2:].isdigit():
        raise ValueError(f"worker must be a pytest-xdist name such as 'gw0', got {worker!r}")
    cores = sorted(cores)
    if not cores:
        raise ValueError("cores is empty: no core to run on")
    return cores[int(worker[2:]) % len(cores)]


def pin_trained_kernels(environ=None) -> dict:
    """Set :data:`TRAINED_ENV` in ``environ`` (default ``os.environ``) where it is not set already.

    oneDNN reads its variables when it first runs a kernel and XLA its thread count when JAX creates
    the CPU client, so this must run before JAX computes anything; a value set by hand is kept.
    Returns the variables as they now are.
    """
    environ = os.environ if environ is None else environ
    for name, value in TRAINED_ENV.items():
        environ.setdefault(name, value)
    return {name: environ[name] for name in TRAINED_ENV}
