"""The performance appendix shows exactly the saved benchmark results (book/_data/performance.json)."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "benchmarks"))
import report  # noqa: E402


def test_page_block_is_the_rendering_of_the_saved_results():
    results = json.loads(report.RESULTS.read_text())
    block = report.generated_block(report.PAGE.read_text())
    assert block == report.render(results), "re-run `make bench` (tests/benchmarks/run.py) to refresh the page"


def test_the_prose_check_skips_exactly_the_generated_block():
    from test_prose_numbers import GENERATED, page_parts

    text = report.PAGE.read_text()
    (skipped,) = GENERATED.findall(text)
    assert skipped == report.START + "\n" + report.generated_block(text) + report.END
    _, body = page_parts(text)
    assert report.generated_block(text) not in body and "Performance notes" in body


def test_saved_ratios_are_the_ratios_of_the_saved_times():
    results = json.loads(report.RESULTS.read_text())
    for row in results["sinusoidal"]["sizes"]:
        t = row["times"]
        assert row["speedup_vs_vectorized"] == t["vectorized"]["median"] / t["pe_lib"]["median"]
        assert row["times_write_floor"] == t["pe_lib"]["median"] / t["write_floor"]["median"]
        assert all(v["min"] <= v["median"] <= v["max"] for v in t.values())


def test_a_changed_number_is_detected(tmp_path):
    results = json.loads(report.RESULTS.read_text())
    page = tmp_path / "performance.md"
    page.write_text(report.PAGE.read_text())
    results["sinusoidal"]["accuracy"]["pe_lib"] *= 10
    report.write_page(results, page)
    assert report.generated_block(page.read_text()) != report.generated_block(report.PAGE.read_text())


def _training_result(first_median: float) -> dict:
    """A hand-written ``results["training"]`` as run.py stores it (times in seconds)."""
    def t(median, lo, hi):
        return {"median": median, "min": lo, "max": hi}

    return {
        "goal_s": 10.0, "task": "lookback", "encoding": "sinusoidal", "steps": 1000,
        "config": {"task": "lookback", "encoding": "sinusoidal", "seq_len": 32, "steps": 1000, "seed": 0,
                   "d_model": 32, "n_layers": 2, "n_heads": 1, "batch_size": 16, "learning_rate": 0.003,
                   "vocab_size": 16, "offset": 3},
        "import_jax": t(0.91, 0.88, 0.97), "first_run": t(first_median, 6.2, 7.0), "cached_run": t(3.84, 3.8, 4.0),
        "compile_estimate": t(2.71, 2.4, 3.0), "first_run_disk_cache": t(4.44, 4.3, 4.6),
        "first_run_with_import": t(first_median + 0.91, 7.1, 7.9), "per_step_ms": 3.84,
        "deterministic": True, "accuracy": 1.0, "load_average": 0.52,
    }


def test_training_section_shows_every_measurement():
    text = "\n".join(report.render_training(_training_result(6.55)))
    for expected in [
        '`pe_lib.train_transformer("lookback", "sinusoidal")`', "2 blocks of 1 head,", "$L = 32$",
        "batches of 16", "learning rate 0.003", "1000 Adam steps",
        "| importing JAX and optax | 0.9 (0.9–1.0) |",
        "| first call: compiling and 1000 steps | 6.5 (6.2–7.0) |",
        "| of which compiling (first call minus a second one) | 2.7 (2.4–3.0) |",
        "| a second call in the same Python: the steps alone | 3.8 (3.8–4.0) |",
        "| per step | 3.8 ms |",
        "| importing and the first call | 7.5 (7.1–7.9) |",
        "| first call in a new Python with the disk cache of an earlier one | 4.4 (4.3–4.6) |",
        "importing and the first call within 10 s — met.",
        "in the same Python and in a new one: yes.",
        "at the training length: 100.0%.", "after the runs: 0.52.",
    ]:
        assert expected in text, expected


def test_training_section_says_when_the_goal_is_missed():
    result = _training_result(9.5) | {"deterministic": False}  # 9.5 s + 0.91 s of imports > 10 s
    text = "\n".join(report.render_training(result))
    assert "within 10 s — **not met**." in text and "in a new one: **no**." in text


def test_training_section_without_results():
    for missing in ({}, {"training": None}):
        assert "Not measured yet" in "\n".join(report.render_training(missing.get("training")))
    results = json.loads(report.RESULTS.read_text())
    assert "### Training a Transformer" in report.render(results)


def _step_result(with_torch: bool = True) -> dict:
    """A hand-written ``results["step"]`` as run.py stores it (seconds per step; FLOPs written out)."""
    row = {"sizes": {"d_model": 64, "n_layers": 2, "n_heads": 4, "seq_len": 128, "batch_size": 16},
           "flops": 1_711_276_032, "tokens": 2048, "threads": 2,
           "pe_lib": {"median": 0.05, "min": 0.048, "max": 0.061, "runs": 5, "tokens_per_s": 40960.0,
                      "gflops": 34.22552064}}
    if with_torch:
        row["torch"] = {"median": 0.0625, "min": 0.06, "max": 0.07, "runs": 5, "threads": 1, "version": "2.13.0+cpu",
                        "tokens_per_s": 32768.0, "gflops": 27.380416512}
    return {"steps_per_call": 200, "rows": [row], "load_average": 0.31}


def test_step_section_shows_both_sides_and_the_ratio():
    text = "\n".join(report.render_step(_step_result()))
    # 1.711 GFLOP; pe_lib 50 ms (48-61), 40,960 tokens/s, 34.2 GFLOP/s; PyTorch 62.5 ms on one thread; 62.5/50 = 1.25
    assert "| 64, 4, 128, 16 | 1.711 | pe_lib | 50 (48–61) | 40,960 | 34.2 | 1.25 |" in text
    assert "| 64, 4, 128, 16 | 1.711 | PyTorch, 1 thread | 62.5 (60–70) | 32,768 | 27.4 | 1 |" in text
    assert "PyTorch 2.13.0+cpu." in text and "after the runs: 0.31." in text and "steps=200" in text


def test_step_section_without_pytorch_or_results():
    text = "\n".join(report.render_step(_step_result(with_torch=False)))
    assert "| 64, 4, 128, 16 | 1.711 | pe_lib | 50 (48–61) | 40,960 | 34.2 | — |" in text
    assert "| PyTorch | not measured | | | |" in text
    assert "PyTorch was not measured." in text
    assert "Not measured yet" in "\n".join(report.render_step(None))
