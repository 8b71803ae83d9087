"""nbval on these notebooks, however it is started: the printed digits are checked with the kernels that made
them (numpy and oneDNN at AVX2 on every x86 processor, XLA on two threads; pe_lib/book/machine.py says why).
``make nbval`` exports the same settings; this file covers ``pytest --nbval notebooks/...`` run by hand,
whose kernels inherit them."""

import os

from pe_lib.book.machine import KERNEL_ENV, ONE_CORE_ENV, one_core

for _name, _value in KERNEL_ENV.items():
    os.environ.setdefault(_name, _value)

# make kernels (tools/kernel_check.py) runs the trained chapters with each worker on a core of its own: the
# kernels it starts inherit it, and XLA must still use two threads (the pin) and train the stored weights
if os.environ.get(ONE_CORE_ENV) == "1":
    _core = one_core(os.environ.get("PYTEST_XDIST_WORKER", "gw0"), os.sched_getaffinity(0))
    os.sched_setaffinity(0, {_core})
    if os.sched_getaffinity(0) != {_core}:
        raise RuntimeError(f"could not confine this nbval worker to core {_core}: {os.sched_getaffinity(0)}")
