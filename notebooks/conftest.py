"""nbval on these notebooks, however it is started: the printed digits are checked with the numpy kernels
that made them (AVX2 on every x86 processor; pe_lib/book/machine.py says why). ``make nbval`` exports the
same setting; this file covers ``pytest --nbval notebooks/...`` run by hand, whose kernels inherit it."""

import os

from pe_lib.book.machine import NUMPY_ENV

for _name, _value in NUMPY_ENV.items():
    os.environ.setdefault(_name, _value)
