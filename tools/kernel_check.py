"""The book's stored outputs under other CPU kernels (``make kernels``, part of ``make test``).

numpy's matrix products go to OpenBLAS, which picks its kernels at load time from the processor
(``OPENBLAS_CORETYPE`` overrides the choice): a machine with AVX-512 sums a dot product in another
order than an AVX2 machine, and an old or unknown x86 processor gets the SSE3 kernels. The printed
digits must not depend on that (issue 32), so this script runs strict nbval on the chapters again,
each time with OpenBLAS forced to another core type that this processor can run:

* the numpy chapters (every chapter that trains no model) under each core type of ``CORE_TYPES``
  other than the one OpenBLAS picks here (``make nbval`` has already checked that one);
* the trained chapters under one other core type (``make test`` checks them only here, or with ``make nbval``
  where this cannot run), with none of the trained models' settings
  (oneDNN at AVX2, two XLA threads: ``pe_lib.book.machine.TRAINED_ENV``) in the environment, so that
  the pins ``import pe_lib`` makes are the ones checked, and with every kernel confined to one core:
  XLA's CPU client would otherwise use one thread instead of two and sum matrix products in another
  order.

Nothing is relaxed: the same strict nbval and sanitizer as ``make nbval``. Each run first checks that
OpenBLAS really loaded the core type it was asked for. A core type this processor cannot run is not
run, and the script says so; if fewer than two other core types can run (or the machine is not
x86-64), it says loudly that the check was not done and exits with status 3 (``make test`` then
reports it, as for the browser tests). Exit status 1 if any run fails.

Usage: ``python tools/kernel_check.py [--core-types Haswell,Prescott] [--trained-core-type Sandybridge]
[--only numpy|trained]``
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pe_lib.book.machine import NUMPY_ENV, ONE_CORE_ENV, TRAINED_ENV  # noqa: E402

# OpenBLAS core types and the processor flags (/proc/cpuinfo) their kernels need
REQUIRED_FLAGS = {
    "SkylakeX": {"avx512f", "avx512bw", "avx512vl", "avx512dq"},
    "Haswell": {"avx2", "fma"},
    "Zen": {"avx2", "fma"},
    "Sandybridge": {"avx"},
    "Prescott": {"pni"},  # SSE3; the kernels of an x86 processor OpenBLAS does not know
}
# make test checks these (besides the one OpenBLAS picks): AVX-512, AVX2, AVX and the SSE3 kernels that
# OpenBLAS gives an x86 processor it does not know: an old laptop, a new server and an unknown CPU
CORE_TYPES = ("SkylakeX", "Haswell", "Sandybridge", "Prescott")
TRAINED_CORE_TYPE = "Sandybridge"
# the name OpenBLAS reports for a core type it was asked for: the pip wheels' OpenBLAS (built without
# DYNAMIC_OLDER) serves Prescott with its generic x86-64 kernels, which it calls Katmai
LOADED_AS = {"Prescott": {"Prescott", "Katmai"}}
TRAINED = ("14_", "15_", "16_", "19_", "20_", "21_")  # chapters that train models or read trained ones (JAX)


def cpu_flags(cpuinfo: str) -> set[str]:
    """The flags of the first processor listed in ``/proc/cpuinfo``'s text."""
    match = re.search(r"^flags\s*:\s*(.*)$", cpuinfo, flags=re.M)
    return set(match.group(1).split()) if match else set()


def runnable(core_types, flags: set[str]) -> tuple[list[str], list[str]]:
    """(core types this processor can run, the others), each in the order given."""
    unknown = [c for c in core_types if c not in REQUIRED_FLAGS]
    if unknown:
        raise ValueError(f"unknown OpenBLAS core type(s) {unknown}; known: {sorted(REQUIRED_FLAGS)}")
    ok = [c for c in core_types if REQUIRED_FLAGS[c] <= flags]
    return ok, [c for c in core_types if c not in ok]


def loaded_core(env: dict) -> str:
    """The core type OpenBLAS reports when numpy loads it under ``env`` (``OPENBLAS_VERBOSE=2``)."""
    out = subprocess.run([sys.executable, "-c", "import numpy"], env={**env, "OPENBLAS_VERBOSE": "2"},
                         capture_output=True, text=True, check=True)
    match = re.search(r"Core:\s*(\S+)", out.stdout + out.stderr)
    return match.group(1) if match else "unknown"


def nbval(notebooks: list[Path], env: dict, label: str, log: Path) -> bool:
    """Strict nbval of ``notebooks`` under ``env``, as ``make nbval`` runs it; True if every cell passed."""
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--nbval", "--nbval-current-env",
           "-n", os.environ.get("KERNEL_JOBS", "2"), "--dist", "loadscope", "--nbval-kernel-startup-timeout", "180",
           "--nbval-sanitize-with", "tests/nbval_sanitize.cfg", "-o", "addopts=", "-o", "testpaths=", "-q",
           "--durations=0", *map(str, notebooks)]
    start = time.perf_counter()
    with log.open("w") as fh:
        result = subprocess.run(cmd, env=env, cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT)
    summary = [line for line in log.read_text().splitlines() if re.search(r"\d+ (passed|failed)", line)]
    print(f"  {label}: {summary[-1].strip('= ') if summary else 'no summary'} "
          f"({time.perf_counter() - start:.0f} s; log {log.relative_to(ROOT)})", flush=True)
    slowest = re.findall(r"^(\d+\.\d+)s call\s+(\S+::Cell \d+)", log.read_text(), flags=re.M)[:3]
    if slowest:  # where the time went (pytest --durations): the three slowest cells
        print("    slowest cells: " + "; ".join(f"{name.replace('notebooks/', '')} {float(s):.0f} s"
                                                for s, name in slowest), flush=True)
    if result.returncode != 0:
        print("".join(f"    {line}\n" for line in log.read_text().splitlines() if line.startswith("FAILED")), end="")
    return result.returncode == 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--core-types", default=",".join(CORE_TYPES))
    parser.add_argument("--trained-core-type", default=TRAINED_CORE_TYPE)
    parser.add_argument("--only", choices=("numpy", "trained"), help="run only the numpy or the trained chapters")
    args = parser.parse_args(argv)
    machine = platform.machine().lower()
    if machine not in ("x86_64", "amd64") or not Path("/proc/cpuinfo").exists():
        print(f"make kernels: THE KERNEL CHECK WAS NOT RUN: OpenBLAS core types are x86-64 names; this is {machine}")
        return 3
    flags = cpu_flags(Path("/proc/cpuinfo").read_text())
    base = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_VERBOSE")}
    base.update(NUMPY_ENV)
    base["OPENBLAS_NUM_THREADS"] = "1"
    native = loaded_core(base)
    wanted = [c for c in args.core_types.split(",") if c]
    ok, cannot = runnable(wanted + [args.trained_core_type], flags)
    numpy_types = [c for c in wanted if c in ok and c != native]
    print(f"OpenBLAS picks {native} on this processor (checked by make nbval); "
          f"other core types checked here: {', '.join(numpy_types) or 'none'}"
          + (f"; this processor cannot run {', '.join(cannot)}" if cannot else ""))
    if len(numpy_types) < 2 or args.trained_core_type not in ok:
        print("make kernels: THE KERNEL CHECK WAS NOT RUN: fewer than two other core types run on this processor")
        return 3
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    numpy_chapters = [nb for nb in notebooks if not nb.name.startswith(TRAINED)]
    trained_chapters = [nb for nb in notebooks if nb.name.startswith(TRAINED)]
    logs = ROOT / "_build" / "kernel_check"
    logs.mkdir(parents=True, exist_ok=True)
    failed = []
    runs = [] if args.only == "trained" else [(c, numpy_chapters, False) for c in numpy_types]
    if args.only != "numpy":
        runs.append((args.trained_core_type, trained_chapters, True))
    for core, chapters, trained in runs:
        env = {**base, "OPENBLAS_CORETYPE": core}
        if trained:
            # nothing set by hand: the pins are the ones `import pe_lib` makes in a learner's kernel, and each
            # nbval worker, with the kernels it starts, runs on one core of its own (notebooks/conftest.py)
            env = {k: v for k, v in env.items() if k not in TRAINED_ENV} | {ONE_CORE_ENV: "1"}
        got = loaded_core(env)
        label = f"{len(chapters)} {'trained ' if trained else ''}chapters, OpenBLAS {core}" + (
            ", one core per kernel" if trained else "")
        if got not in LOADED_AS.get(core, {core}):
            print(f"  {label}: OpenBLAS loaded {got}, not {core}: the run would check nothing new")
            failed.append(label)
            continue
        if not nbval(chapters, env, label, logs / f"{core}{'-trained' if trained else ''}.log"):
            failed.append(label)
    if failed:
        print(f"make kernels: {len(failed)} of {len(runs)} runs FAILED: {'; '.join(failed)}")
        return 1
    print(f"make kernels: every stored output reproduced under {len(runs)} other kernel choices")
    return 0


if __name__ == "__main__":
    sys.exit(main())
