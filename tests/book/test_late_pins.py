"""The warning when JAX computed before ``import pe_lib`` (pe_lib.book.late_pins)."""

import subprocess
import sys
import types
import warnings

import pytest

from pe_lib.book.late_pins import jax_started, unpinned, warn_if_jax_started

PINNED = {"DNNL_MAX_CPU_ISA": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2", "PJRT_NPROC": "2"}  # written out, not imported


def bridge(started: bool) -> dict:
    """A stand-in for ``sys.modules`` holding JAX's xla_bridge with its backends made or not."""
    return {"jax._src.xla_bridge": types.SimpleNamespace(backends_are_initialized=lambda: started)}


def test_jax_started_reads_the_bridge_without_importing_jax():
    assert jax_started(bridge(True)) is True
    assert jax_started(bridge(False)) is False
    assert jax_started({}) is False  # JAX never imported
    assert jax_started({"jax._src.xla_bridge": types.SimpleNamespace()}) is False  # a JAX without the function


def test_unpinned_lists_every_variable_not_at_its_pinned_value():
    assert unpinned({}) == list(PINNED)
    assert unpinned(PINNED) == []
    assert unpinned(PINNED | {"PJRT_NPROC": "4"}) == ["PJRT_NPROC"]  # set by hand to another value
    assert unpinned({"PJRT_NPROC": "2"}) == ["DNNL_MAX_CPU_ISA", "ONEDNN_MAX_CPU_ISA"]


def test_a_warning_only_when_jax_started_and_a_pin_is_missing():
    with pytest.warns(RuntimeWarning, match=r"before `import pe_lib`.*PJRT_NPROC=2") as caught:
        assert warn_if_jax_started({**PINNED, "PJRT_NPROC": "8"}, bridge(True)) == ["PJRT_NPROC"]
    assert "DNNL" not in str(caught[0].message)  # names only what is missing
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert warn_if_jax_started({}, bridge(False)) == []  # JAX has not computed: the pins will act
        assert warn_if_jax_started(PINNED, bridge(True)) == []  # pinned by hand before Python started


@pytest.mark.parametrize(("code", "env", "warned"), [
    ("import jax.numpy as jnp; jnp.ones(1) + 1; import pe_lib", {}, True),
    ("import jax; import pe_lib", {}, False),  # imported, nothing computed: the pins still act
    ("import pe_lib, jax.numpy as jnp; jnp.ones(1) + 1", {}, False),
    ("import jax.numpy as jnp; jnp.ones(1) + 1; import pe_lib", PINNED, False),
])
def test_the_real_import_warns_only_when_the_pins_came_too_late(code, env, warned):
    clean = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", **env}
    done = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c", code], env=clean,
                          capture_output=True, text=True)
    assert (done.returncode != 0) == warned, done.stderr[-2000:]
    assert ("kernel settings cannot act" in done.stderr) == warned
