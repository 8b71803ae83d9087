"""Benchmarks of the book (``make bench``; not part of ``make test``, nothing here is asserted).

Usage::

    python tests/benchmarks/run.py            # the table, shifts, widgets and a training run (a few minutes)
    python tests/benchmarks/run.py --book     # also nbval, a clean build and an execution of every notebook
    python tests/benchmarks/run.py --quick    # fewer repetitions, results not saved
    python tests/benchmarks/run.py --only training   # one section alone, printed as on the page, not saved

Every comparison is a ratio measured in one run: the implementations being compared are timed in
turn, round after round (``time.perf_counter``), and the median, fastest and slowest runs are kept.
The results go to ``book/_data/performance.json`` and into the generated block of
``book/performance.md`` (unless ``--no-save``). Without ``--book`` the previous whole-book figures
are kept.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import gc
import importlib
import inspect
import io
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # widgets draw without a front end here; figures are rendered to PNG explicitly

import mpmath  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import report  # noqa: E402

import pe_lib  # noqa: E402

ROOT = report.ROOT
SIN = importlib.import_module("pe_lib.encodings.sinusoidal")
SIZES = [(128, 512), (2048, 512), (16384, 1024)]
WIDGET_GOAL_MS = 100.0


# ---- the two references, written from the formula ----------------------------------------------------
def double_loop(n: int, d: int, base: float = 10_000.0) -> np.ndarray:
    """The articles' first implementation: a loop over positions, a loop over pairs."""
    pe = np.zeros((n, d))
    for pos in range(n):
        for i in range(0, d, 2):
            pe[pos, i] = math.sin(pos / base ** (i / d))  # PE(pos, 2k)   = sin(pos / base^(2k/d))
            pe[pos, i + 1] = math.cos(pos / base ** (i / d))  # PE(pos, 2k+1) = cos(pos / base^(2k/d))
    return pe


def vectorized(n: int, d: int, base: float = 10_000.0) -> np.ndarray:
    """The common numpy form: angles as an outer product, then strided writes into a zeroed table."""
    pe = np.zeros((n, d))
    position = np.arange(n, dtype=np.float64)[:, None]
    omega = np.exp(np.arange(0, d, 2) * -(math.log(base) / d))  # base^(-2k/d)
    pe[:, 0::2] = np.sin(position * omega)
    pe[:, 1::2] = np.cos(position * omega)
    return pe


def write_floor(n: int, d: int) -> np.ndarray:
    """What no implementation can beat: allocating and writing the same bytes once."""
    out = np.empty((n, d))
    out.fill(0.5)
    return out


# ---- measuring -------------------------------------------------------------------------------------
def summarize(times: list[float]) -> dict:
    return {"median": statistics.median(times), "min": min(times), "max": max(times), "runs": len(times)}


def race(fns: dict, rounds: int) -> dict:
    """Time each function ``rounds`` times, in turn within each round; one warm-up call each."""
    for fn in fns.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        gc.collect()  # once per round: a collection right before a call would also flush the caches
        gc.disable()
        try:
            for name, fn in fns.items():
                start = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - start)
        finally:
            gc.enable()
    return {name: summarize(t) for name, t in times.items()}


def peak_bytes(fn) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def machine() -> dict:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    blas = "unknown"
    with contextlib.suppress(Exception):
        info = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        blas = f"{info.get('name', '?')} {info.get('version', '')}".strip()
    return {
        "cpu": cpu,
        "logical_cpus": os.cpu_count(),
        "platform": platform.platform(terse=True),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "blas": blas,
        "longdouble_bits": int(np.finfo(np.longdouble).nmant) + 1,
        "extended_path": bool(SIN._EXTENDED_OK),
    }


# ---- 1. the table ------------------------------------------------------------------------------------
def trig_counts(n: int, d: int) -> tuple[int, int]:
    """sin + cos evaluations: the formula needs n*d; the rotation path needs (coarse + fine) * d."""
    fine = math.isqrt(n - 1) + 1
    coarse = n // fine + 1
    return n * d, (coarse + fine) * d


def exact_row(pos: int, d: int) -> np.ndarray:
    with mpmath.workdps(40):
        out = []
        for k in range(d // 2):
            angle = pos * mpmath.power(10_000, -mpmath.mpf(2 * k) / d)
            out += [float(mpmath.sin(angle)), float(mpmath.cos(angle))]
    return np.array(out)


def accuracy(d: int = 64, n: int = 100_001, rows: int = 24) -> dict:
    sample = np.sort(np.random.default_rng(6).choice(n, size=rows, replace=False))
    sample[-1] = n - 1
    exact = np.array([exact_row(int(p), d) for p in sample])
    return {
        "d": d,
        "rows": rows,
        "max_position": n - 1,
        "vectorized": float(np.abs(vectorized(n, d)[sample] - exact).max()),
        "pe_lib": float(np.abs(pe_lib.sinusoidal(n, d)[sample] - exact).max()),
    }


def bench_sinusoidal(quick: bool) -> dict:
    sizes = []
    for n, d in SIZES:
        rounds = (5 if quick else 21) if n * d < 10**6 else (3 if quick else 9)
        fns = {
            "vectorized": lambda n=n, d=d: vectorized(n, d),
            "pe_lib": lambda n=n, d=d: pe_lib.sinusoidal(n, d),
            "write_floor": lambda n=n, d=d: write_floor(n, d),
        }
        times = race(fns, rounds)
        if (n, d) == SIZES[0]:
            times["double_loop"] = race({"double_loop": lambda n=n, d=d: double_loop(n, d)}, 1 if quick else 3)[
                "double_loop"
            ]
        trig_vec, trig_ours = trig_counts(n, d)
        row = {
            "n": n,
            "d": d,
            "times": times,
            "speedup_vs_vectorized": times["vectorized"]["median"] / times["pe_lib"]["median"],
            "times_write_floor": times["pe_lib"]["median"] / times["write_floor"]["median"],
            "trig_vectorized": trig_vec,
            "trig_pe_lib": trig_ours,
            "table_bytes": n * d * 8,
            "peak_bytes": {
                "vectorized": peak_bytes(lambda n=n, d=d: vectorized(n, d)),
                "pe_lib": peak_bytes(lambda n=n, d=d: pe_lib.sinusoidal(n, d)),
                "pe_lib_split": peak_bytes(lambda n=n, d=d: pe_lib.sinusoidal(n, d, layout="split")),
            },
        }
        if "double_loop" in times:
            row["speedup_vs_loop"] = times["double_loop"]["median"] / times["pe_lib"]["median"]
        sizes.append(row)
        print(f"  sinusoidal {n} x {d}: vectorized {report._timing(times['vectorized'])} ms, pe_lib "
              f"{report._timing(times['pe_lib'])} ms, floor {report._timing(times['write_floor'])} ms "
              f"-> {row['speedup_vs_vectorized']:.1f}x faster, {row['times_write_floor']:.1f}x floor", flush=True)
    acc = accuracy()
    small, *larger = sizes
    biggest = sizes[-1]
    goals = [
        {"text": "at least 3× faster than the vectorized form at the two larger sizes",
         "measured": ", ".join(_ratio_text(r) for r in larger),
         "met": all(r["speedup_vs_vectorized"] >= 3 for r in larger)},
        {"text": "not slower than the vectorized form at the smallest size",
         "measured": _ratio_text(small), "met": small["speedup_vs_vectorized"] >= 1},
        {"text": "within 6× of the write floor at the largest size",
         "measured": f"{biggest['times_write_floor']:.1f}×", "met": biggest["times_write_floor"] <= 6},
        {"text": "peak memory no more than the vectorized form's",
         "measured": ", ".join(f"{r['peak_bytes']['pe_lib'] / r['peak_bytes']['vectorized']:.2f} of it" for r in sizes),
         "met": all(r["peak_bytes"]["pe_lib"] <= r["peak_bytes"]["vectorized"] for r in sizes)},
        {"text": "largest error at most 1e-12 against 40-digit values, positions up to 100,000",
         "measured": f"{acc['pe_lib']:.1e}", "met": acc["pe_lib"] <= 1e-12},
    ]
    return {"sizes": sizes, "accuracy": acc, "goals": goals}


def _ratio_text(row: dict) -> str:
    return f"{row['speedup_vs_vectorized']:.1f}× at {row['n']} × {row['d']}"


# ---- 2. shifting many vectors -----------------------------------------------------------------------------
def bench_shift(quick: bool, offset: float = 3.0) -> dict:
    sizes = []
    for n, d in [(128, 512), (4096, 512)]:
        x = np.random.default_rng(0).normal(size=(n, d))
        m = pe_lib.shift_matrix(offset, d)
        times = race(
            {
                "build_and_matmul": lambda x=x, d=d: x @ pe_lib.shift_matrix(offset, d).T,
                "matmul": lambda x=x, m=m: x @ m.T,
                "apply_shift": lambda x=x: pe_lib.apply_shift(x, offset),
            },
            5 if quick else 15,
        )
        sizes.append({
            "n": n, "d": d, "times": times,
            "speedup_build": times["build_and_matmul"]["median"] / times["apply_shift"]["median"],
            "speedup_matmul": times["matmul"]["median"] / times["apply_shift"]["median"],
        })
        print(f"  shift {n} x {d}: M @ x {report._timing(times['matmul'])} ms, apply_shift "
              f"{report._timing(times['apply_shift'])} ms", flush=True)
    return {"offset": offset, "sizes": sizes}


# ---- 4. widgets ------------------------------------------------------------------------------------------------
def widget_builders() -> list[tuple[str, object]]:
    """Public pe_lib functions that build an ipywidgets control: their source imports ipywidgets."""
    found = []
    for name in sorted(pe_lib.__all__):
        fn = getattr(pe_lib, name)
        with contextlib.suppress(TypeError, OSError):
            if inspect.isfunction(fn) and "import ipywidgets" in inspect.getsource(fn):
                found.append((name, fn))
    return found


def _walk(widget):
    """Every widget in the tree under ``widget`` (``children`` of boxes), each once, breadth first."""
    seen, stack = set(), [widget]
    while stack:
        w = stack.pop(0)
        if id(w) in seen:
            continue
        seen.add(id(w))
        yield w
        stack.extend(getattr(w, "children", ()))


def _sliders(widget) -> list:
    """Every slider in the widget tree (ipywidgets controls with a numeric value between min and max)."""
    import ipywidgets

    return [w for w in _walk(widget)
            if isinstance(w, (ipywidgets.IntSlider, ipywidgets.FloatSlider, ipywidgets.FloatLogSlider))]


def _pictures(widget) -> list:
    """The ``ipywidgets.Image`` views in the tree: a callback that draws into one has already rendered."""
    import ipywidgets

    return [w for w in _walk(widget) if isinstance(w, ipywidgets.Image)]


def _largest(slider) -> float:
    import ipywidgets

    if isinstance(slider, ipywidgets.FloatLogSlider):
        return slider.base**slider.max
    return slider.max


def _render_figures(widget) -> bool:
    """Render the widget's latest figure to PNG as the inline backend shows it (bbox_inches="tight")."""
    from matplotlib.figure import Figure

    rendered = False
    for attr in ("result", "figure"):
        fig = getattr(widget, attr, None)
        if isinstance(fig, Figure):
            fig.savefig(io.BytesIO(), format="png", bbox_inches="tight")
            rendered = True
    return rendered


def _redraw_time(widget, slider, value) -> tuple[float, str]:
    """Seconds from the slider change until the new picture exists, and how it was made.

    A callback that shows its figure in an ``ipywidgets.Image`` has drawn and encoded it by the time
    it returns: its time is the wait. Otherwise the figure the widget exposes (``.result`` or
    ``.figure``) is rendered to PNG as the notebook front end would, inside the timed span. If
    neither happens the redraw is reported as ``"nothing"``: it would be a no-op, not a fast redraw.
    """
    pictures = _pictures(widget)
    before = [bytes(p.value) for p in pictures]
    start = time.perf_counter()
    slider.value = value  # observers run synchronously: this is the callback
    if any(bytes(p.value) != b for p, b in zip(pictures, before, strict=True)):
        how = "image widget"
    else:
        how = "PNG of the figure" if _render_figures(widget) else "nothing"
    return time.perf_counter() - start, how


def bench_widgets(quick: bool) -> dict:
    import matplotlib.pyplot as plt

    builders = widget_builders()
    if not builders:
        return {"goal_ms": WIDGET_GOAL_MS, "builders": [], "note": "No widget builders exist in pe_lib yet."}
    rounds = 3 if quick else 7
    results = []
    for name, fn in builders:
        entry: dict = {"name": name, "sliders": []}
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                widget = fn()
                for slider in _sliders(widget):
                    default, largest = slider.value, _largest(slider)
                    to_largest, to_default, how = [], [], set()
                    for _ in range(rounds):
                        for value, times in ((largest, to_largest), (default, to_default)):
                            seconds, made = _redraw_time(widget, slider, value)
                            times.append(seconds)
                            how.add(made)
                        plt.close("all")
                    entry["sliders"].append({
                        "name": slider.description or type(slider).__name__,
                        "default_value": float(default), "largest_value": float(largest),
                        "default": summarize(to_default), "largest": summarize(to_largest),
                        "drawn_by": ", ".join(sorted(how)),
                    })
        except Exception as exc:  # a builder that needs arguments, or fails: reported, not fatal
            entry["error"] = f"{type(exc).__name__}: {exc}"[:160]
        results.append(entry)
        worst = max((max(s["largest"]["median"], s["default"]["median"]) for s in entry["sliders"]), default=0.0)
        ways = sorted({s["drawn_by"] for s in entry["sliders"]})
        print(f"  widget {name}: {len(entry['sliders'])} sliders, slowest redraw {worst * 1e3:.0f} ms "
              f"(median; picture made by: {'; '.join(ways)}; goal < {WIDGET_GOAL_MS:.0f} ms)"
              + (f" ({entry['error']})" if "error" in entry else ""), flush=True)
        for s in entry["sliders"]:
            print(f"    {s['name']}: default {s['default_value']:g} {report._timing(s['default'])} ms, "
                  f"largest {s['largest_value']:g} {report._timing(s['largest'])} ms", flush=True)
    return {"goal_ms": WIDGET_GOAL_MS, "builders": results}


# ---- 5. training a Transformer ---------------------------------------------------------------------------------
TRAINING_GOAL_S = 10.0
_TRAINING_SCRIPT = """
import dataclasses, json, sys, time
start = time.perf_counter()
import jax, optax  # what the first train_transformer call imports
imported = time.perf_counter()
import pe_lib
task, encoding = sys.argv[1], sys.argv[2]
first = time.perf_counter()
model = pe_lib.train_transformer(task, encoding, progress=False)
first = time.perf_counter() - first
second = time.perf_counter()
again = pe_lib.train_transformer(task, encoding, progress=False)  # compiled functions are cached now
second = time.perf_counter() - second
print(json.dumps({"import_s": imported - start, "first_s": first, "cached_s": second, "steps": len(model.losses),
                  "identical": bool((model.losses == again.losses).all()), "losses": model.losses.tolist(),
                  "accuracy": pe_lib.task_accuracy(model, model.seq_len), "config": dataclasses.asdict(model.config)}))
"""


def bench_training(quick: bool) -> dict:
    """One default ``train_transformer`` run in a fresh Python, twice: the first call pays for
    importing JAX and compiling, the second (same config) only for the steps. Then a third fresh
    Python with the compilation cache the first one left on disk (``PE_LIB_JAX_CACHE``)."""
    runs = []
    for _ in range(1 if quick else 3):
        with tempfile.TemporaryDirectory() as cache:
            env = _env() | {"PE_LIB_JAX_CACHE": cache}
            cold, warm = (
                json.loads(subprocess.run([sys.executable, "-c", _TRAINING_SCRIPT, "lookback", "sinusoidal"], env=env,
                                          capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1])
                for _ in range(2)
            )
        runs.append(cold | {"warm_first_s": warm["first_s"], "same_losses": warm["losses"] == cold["losses"]})
    first = summarize([r["first_s"] for r in runs])
    cached = summarize([r["cached_s"] for r in runs])
    compile_s = summarize([r["first_s"] - r["cached_s"] for r in runs])
    warm = summarize([r["warm_first_s"] for r in runs])
    total = summarize([r["import_s"] + r["first_s"] for r in runs])  # what a learner waits for
    result = {
        "goal_s": TRAINING_GOAL_S, "task": "lookback", "encoding": "sinusoidal", "config": runs[0]["config"],
        "steps": runs[0]["steps"], "import_jax": summarize([r["import_s"] for r in runs]), "first_run": first,
        "cached_run": cached, "compile_estimate": compile_s, "first_run_disk_cache": warm,
        "first_run_with_import": total,
        "per_step_ms": cached["median"] / runs[0]["steps"] * 1e3,
        "deterministic": all(r["identical"] and r["same_losses"] for r in runs), "accuracy": runs[0]["accuracy"],
        "load_average": round(os.getloadavg()[0], 2),
    }
    print(f"  default run (lookback, sinusoidal, {result['steps']} steps): first call {first['median']:.1f} s "
          f"(compile ~{compile_s['median']:.1f} s + steps {cached['median']:.1f} s, "
          f"{result['per_step_ms']:.1f} ms/step); with the disk cache of an earlier process {warm['median']:.1f} s; "
          f"importing jax {result['import_jax']['median']:.1f} s; importing + first call {total['median']:.1f} s, "
          f"goal <= {TRAINING_GOAL_S:.0f} s -> {'met' if total['median'] <= TRAINING_GOAL_S else 'NOT MET'}; "
          f"bit-identical repeats: "
          f"{result['deterministic']}; accuracy {100 * result['accuracy']:.1f}%; load {result['load_average']}",
          flush=True)
    return result


# ---- 6. the training step against PyTorch -----------------------------------------------------------------
# the two sizes of issue 27: the chapters' model, and the width and length a text model needs (d_k = 16)
STEP_SIZES = ({"d_model": 32, "n_layers": 2, "n_heads": 4, "seq_len": 64, "batch_size": 16},
              {"d_model": 64, "n_layers": 2, "n_heads": 4, "seq_len": 128, "batch_size": 16})
STEP_COUNT = 200  # steps per timed call: two of pe_lib's chunks of 100
_STEP_SCRIPT = """
import json, sys, time
import pe_lib
sizes = json.loads(sys.argv[1])
pe_lib.train_transformer("text", "rope", steps=100, progress=False, **sizes)  # compiles the step for these sizes
times = []
for _ in range(int(sys.argv[3])):
    start = time.perf_counter()
    pe_lib.train_transformer("text", "rope", steps=int(sys.argv[2]), progress=False, **sizes)
    times.append((time.perf_counter() - start) / int(sys.argv[2]))
print(json.dumps(times))
"""
TORCH_PYTHON = ROOT / ".venv-reference" / "bin" / "python"


def bench_step(quick: bool) -> dict:
    """Seconds per training step of pe_lib (a second ``train_transformer`` call of the same sizes: batches made,
    steps run, nothing compiled) and of the same model in PyTorch eager (``tests/benchmarks/torch_step.py``, the
    faster of one thread and two), at :data:`STEP_SIZES`; tokens per second and GFLOP/s from
    :func:`pe_lib.trained.flops.step_flops`. The PyTorch side needs ``make reference``'s environment."""
    from pe_lib.trained.corpus import TEXT_VOCAB_SIZE
    from pe_lib.trained.flops import step_flops

    rounds = 2 if quick else 5
    threads = int(os.environ.get("PJRT_NPROC", "2"))
    rows = []
    for sizes in STEP_SIZES:
        flops = step_flops(vocab_size=TEXT_VOCAB_SIZE, **{k: v for k, v in sizes.items() if k != "n_heads"})
        tokens = sizes["batch_size"] * sizes["seq_len"]
        out = subprocess.run([sys.executable, "-c", _STEP_SCRIPT, json.dumps(sizes), str(STEP_COUNT), str(rounds)],
                             env=_env(), capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
        sides = {"pe_lib": summarize(json.loads(out))}
        if TORCH_PYTHON.exists():  # PyTorch's best of one thread and two: the comparison is with its fastest
            args = [str(sizes[k]) for k in ("d_model", "n_layers", "n_heads", "seq_len", "batch_size")]
            timed = []
            for n in (1, 2):
                done = subprocess.run([str(TORCH_PYTHON), str(Path(__file__).with_name("torch_step.py")), *args,
                                       "--threads", str(n), "--rounds", str(rounds)],
                                      env=_env() | {"OMP_NUM_THREADS": str(n)}, capture_output=True, text=True,
                                      check=True)
                timed.append(json.loads(done.stdout.strip().splitlines()[-1]))
            best = min(timed, key=lambda t: t["median"])
            sides["torch"] = {k: best[k] for k in ("median", "min", "max", "threads")} | {"runs": rounds}
            sides["torch"]["version"] = best["torch"]
        row = {"sizes": sizes, "flops": flops, "tokens": tokens, "threads": threads}
        for side, timing in sides.items():
            row[side] = timing | {"tokens_per_s": tokens / timing["median"], "gflops": flops / timing["median"] / 1e9}
        rows.append(row)
        text = ", ".join(f"{side} {1e3 * row[side]['median']:.1f} ms/step ({row[side]['tokens_per_s']:,.0f} tokens/s, "
                         f"{row[side]['gflops']:.1f} GFLOP/s)" for side in sides)
        ratio = f" -> pe_lib {row['torch']['median'] / row['pe_lib']['median']:.2f}x PyTorch's speed" \
            if "torch" in row else " (PyTorch not measured: run make reference first)"
        print(f"  d_model {sizes['d_model']}, {sizes['n_heads']} heads, L {sizes['seq_len']}, batch "
              f"{sizes['batch_size']}: {text}{ratio}", flush=True)
    return {"steps_per_call": STEP_COUNT, "rows": rows, "load_average": round(os.getloadavg()[0], 2)}


# ---- 3. the whole book ----------------------------------------------------------------------------------------
def _env() -> dict:
    return os.environ | {"PYTHONHASHSEED": "0", "MPLBACKEND": "module://matplotlib_inline.backend_inline"}


def _run(cmd: list[str], **kw) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, text=True, check=False, **kw)
    return time.perf_counter() - start, proc


RUN_ALL_GOAL_S = 15.0  # a chapter's Run All on the 2-core machine
RUN_ALL_TRAINING_GOAL_S = 60.0  # a chapter that trains models
SLOW_CELL_S = 3.0  # a cell slower than this must say so in the prose or show progress


def _run_all_goal(nb) -> float:
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    return RUN_ALL_TRAINING_GOAL_S if re.search(r"\btrain_transformers?\(", code) else RUN_ALL_GOAL_S


def _execute_timed(notebooks: list[Path]) -> tuple[float, str, list[dict], list[dict]]:
    """Execute every notebook (nothing is written): each chapter's Run All time and each cell's time.

    A chapter's time is what a learner waits for after "Restart kernel and run all": from starting
    the kernel to the last cell's reply.
    """
    import nbformat
    from nbclient import NotebookClient

    os.environ.update(_env())  # the kernels inherit the environment of `make execute`
    cells, chapters, failures = [], [], []
    start = time.perf_counter()
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        client = NotebookClient(nb, timeout=600, kernel_name="python3",
                                resources={"metadata": {"path": str(path.parent)}}, record_timing=True)
        t0 = time.perf_counter()
        try:
            client.execute()
        except Exception as exc:
            failures.append(f"{path.name}: {type(exc).__name__}")
        chapters.append({"notebook": path.name, "seconds": time.perf_counter() - t0, "goal": _run_all_goal(nb)})
        for index, cell in enumerate(nb.cells):
            stamps = cell.metadata.get("execution", {})
            if "iopub.execute_input" in stamps and "shell.execute_reply" in stamps:
                t0 = datetime.datetime.fromisoformat(stamps["iopub.execute_input"].replace("Z", "+00:00"))
                t1 = datetime.datetime.fromisoformat(stamps["shell.execute_reply"].replace("Z", "+00:00"))
                cells.append({"notebook": path.name, "cell": index, "seconds": (t1 - t0).total_seconds()})
    seconds = time.perf_counter() - start
    cells.sort(key=lambda c: -c["seconds"])
    slow = [c for c in cells if c["seconds"] > SLOW_CELL_S]
    return seconds, ("all executed" if not failures else "failed: " + ", ".join(failures)), slow or cells[:5], chapters


def _pytest_summary(proc: subprocess.CompletedProcess) -> str:
    lines = [ln for ln in proc.stdout.strip().splitlines() if ln.strip()]
    last = lines[-1].strip("= ") if lines else "no output"
    return last.split(" in ")[0]


def bench_book() -> dict:
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    print(f"  nbval over {len(notebooks)} notebooks ...", flush=True)
    nbval_s, nbval = _run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--nbval", "--nbval-current-env",
                           "--nbval-sanitize-with", "tests/nbval_sanitize.cfg", "-o", "addopts=", "-o", "testpaths=",
                           "-q", *[str(p.relative_to(ROOT)) for p in notebooks]])
    with tempfile.TemporaryDirectory(prefix="pe-bench-book-") as out:
        print("  clean HTML build ...", flush=True)
        build_s, build = _run(["make", "book", f"BOOKOUT={out}"])
    print("  deterministic execution ...", flush=True)
    execute_s, execute_result, slowest, chapters = _execute_timed(notebooks)
    return {
        "date": datetime.date.today().isoformat(),
        "notebooks": len(notebooks),
        "nbval_seconds": nbval_s,
        "nbval_result": _pytest_summary(nbval),
        "build_seconds": build_s,
        "build_result": "succeeded" if build.returncode == 0 else f"failed (exit {build.returncode})",
        "execute_seconds": execute_s,
        "execute_result": execute_result,
        "slowest_cells": slowest,
        "slow_cell_seconds": SLOW_CELL_S,
        "chapters": chapters,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--book", action="store_true", help="also time nbval, a clean build and an execution")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions; implies --no-save")
    parser.add_argument("--no-save", action="store_true", help="print only; leave the JSON and the page alone")
    parser.add_argument("--only", choices=["training", "step"],
                        help="run this section alone and print its part of the page (implies --no-save)")
    args = parser.parse_args(argv)
    if args.only == "step":
        print("6. the training step against PyTorch")
        step = bench_step(args.quick)
        print("\n" + "\n".join(report.render_step(step)))
        return 0
    if args.only == "training":
        print("5. training a Transformer")
        training = bench_training(args.quick)
        print("\n" + "\n".join(report.render_training(training)))
        return 0
    results = {"date": datetime.date.today().isoformat(), "machine": machine(), "load_average": {}}
    results["load_average"]["start"] = round(os.getloadavg()[0], 2)
    print(f"machine: {results['machine']['cpu']}, {results['machine']['logical_cpus']} CPUs, "
          f"numpy {results['machine']['numpy']}, {results['machine']['blas']}")
    print("1. the sinusoidal table")
    results["sinusoidal"] = bench_sinusoidal(args.quick)
    for goal in results["sinusoidal"]["goals"]:
        print(f"   goal: {goal['text']}: {goal['measured']} -> {'met' if goal['met'] else 'NOT MET'}")
    print("2. shifting many vectors")
    results["shift"] = bench_shift(args.quick)
    print("4. widgets")
    results["widgets"] = bench_widgets(args.quick)
    print("5. training a Transformer")
    results["training"] = bench_training(args.quick)
    print("6. the training step against PyTorch")
    results["step"] = bench_step(args.quick)
    results["load_average"]["end"] = round(os.getloadavg()[0], 2)
    load = results["load_average"]
    print(f"load average (1 min) at start and end: {load['start']}, {load['end']}")
    if args.book:
        print("3. the whole book")
        results["book"] = bench_book()
    elif report.RESULTS.exists():
        previous = json.loads(report.RESULTS.read_text()).get("book")
        if previous:
            results["book"] = previous
    if results.get("book"):
        b = results["book"]
        print(f"   nbval {b['nbval_seconds']:.1f} s ({b['nbval_result']}), build {b['build_seconds']:.1f} s "
              f"({b['build_result']}), execution {b['execute_seconds']:.1f} s; slowest cells:")
        for c in b["slowest_cells"]:
            print(f"     {c['seconds']:6.2f} s  {c['notebook']} cell {c['cell']}")
    if args.quick or args.no_save:
        return 0
    report.RESULTS.parent.mkdir(parents=True, exist_ok=True)
    report.RESULTS.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    report.write_page(results)
    print(f"saved {report.RESULTS.relative_to(ROOT)} and {report.PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
