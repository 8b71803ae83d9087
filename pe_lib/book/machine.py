"""The same printed digits on every x86 processor: numpy's vectorized loops capped at AVX2.

numpy picks its SIMD kernels for ``exp``, ``log``, ``sin``, ``power``... at import time from what the
processor offers, and its AVX-512 kernels round some results differently in the last bit from its
AVX2 kernels. Most chapters never print so many digits, but a few outputs do: on an AVX-512 machine
chapter 3 counts 214 frequencies that differ from ``10000 ** (-2k/d)`` instead of 216. nbval compares every printed
digit, so the book's outputs are made, and checked, with numpy's AVX-512 kernels switched off
(``NPY_DISABLE_CPU_FEATURES``, read when numpy is imported): the same kernels as on any AVX2 machine.
The trained models cap XLA's generated code the same way (``pe_lib.trained.training.X86_MAX_ISA``).
Two things are not pinned, and the trained chapters' stored outputs depend on them (measured in
issue 32; 200 training steps of chapter 14's model): the oneDNN kernels XLA calls for matrix
products choose by processor (``DNNL_MAX_CPU_ISA=AVX2`` gives other weights on an AVX-512 machine
with VNNI/BF16, which the book's machines are), and XLA splits work over the cores it may use (one core,
``taskset -c 0``, gives other weights than two). Holding oneDNN to AVX2 changes every trained output,
so it waits for the next re-run of the trained chapters; the running page says what a learner sees.

OpenBLAS, which numpy's matrix products call, picks its kernels by processor as well, and there is no
setting a process can make for itself (it is read when numpy is loaded). The book does not pin it:
no printed digit depends on it (a rounding-level difference is printed as a bound), and
``make kernels`` (``tools/kernel_check.py``, part of ``make test``) re-runs the chapters under other
OpenBLAS kernels to prove it.

``make`` exports the setting to every command; :data:`NUMPY_ENV` is the same setting for the tools
that start kernels themselves (``tools/execute.py``, nbval through ``tests/conftest.py``). Features a
processor lacks are ignored, so the setting is harmless on ARM and older x86.
"""

NUMPY_ENV = {"NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR"}
