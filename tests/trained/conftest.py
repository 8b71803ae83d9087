"""For mutation testing (``make mutate``, mutmut): record every test that runs the model's code.

mutmut first runs the suite once with ``MUTANT_UNDER_TEST=stats`` and records, for each function, the
tests that called it; each mutant then runs only those tests, in a fresh process. JAX runs the Python
code of a jitted function only when it traces it, and keeps what it traced (its own caches and
pe_lib's ``lru_cache`` of compiled functions and of the corpus): without this fixture only the first
test to compile the model would be recorded for :func:`pe_lib.trained.transformer.forward`, and a
mutant of it would not run the other tests. In a normal run (``make unit``) it does nothing.
"""

import os

import pytest


@pytest.fixture(autouse=True)
def _trace_afresh_while_mutmut_records():
    if os.environ.get("MUTANT_UNDER_TEST") == "stats":
        import jax

        from pe_lib.trained import corpus, training

        jax.clear_caches()
        for cached in (training._compiled, training._forward, corpus.corpus_split, corpus._ids):
            cached.cache_clear()
    yield
