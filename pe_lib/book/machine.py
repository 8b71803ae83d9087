"""The same printed digits on every x86 processor: numpy's vectorized loops capped at AVX2.

numpy picks its SIMD kernels for ``exp``, ``log``, ``sin``, ``power``... at import time from what the
processor offers, and its AVX-512 kernels round some results differently in the last bit from its
AVX2 kernels. Most chapters never print so many digits, but a few outputs do: on an AVX-512 machine
chapter 3 counts 214 frequencies that differ from ``10000 ** (-2k/d)`` instead of 216, and chapter 7's
stack of twelve layers amplifies the last bits into its third decimal. nbval compares every printed
digit, so the book's outputs are made, and checked, with numpy's AVX-512 kernels switched off
(``NPY_DISABLE_CPU_FEATURES``, read when numpy is imported): the same kernels as on any AVX2 machine.
The trained models cap XLA the same way (``pe_lib.trained.training.X86_MAX_ISA``).

``make`` exports the setting to every command; :data:`NUMPY_ENV` is the same setting for the tools
that start kernels themselves (``tools/execute.py``, nbval through ``tests/conftest.py``). Features a
processor lacks are ignored, so the setting is harmless on ARM and older x86.
"""

NUMPY_ENV = {"NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR"}
