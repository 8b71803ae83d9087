"""Shared test settings: hypothesis runs derandomized so that CI is reproducible.

Profiles (``HYPOTHESIS_PROFILE=...``): ``ci`` (default) draws 100 examples per property, enough to
hit the edge cases of the strategies (the derandomized search tries boundary values first) while
keeping ``make unit`` short; ``thorough`` draws 2000, for an occasional deep run; ``dev`` 50, random.
"""

import os

from hypothesis import HealthCheck, settings

from pe_lib.book.machine import KERNEL_ENV

# the tests that start kernels or subprocesses themselves (test_pipeline) inherit it; nbval run on the
# notebooks by hand gets it from notebooks/conftest.py (see pe_lib/book/machine.py)
for _name, _value in KERNEL_ENV.items():
    os.environ.setdefault(_name, _value)

settings.register_profile(
    "ci", derandomize=True, max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", derandomize=True, max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=50, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
