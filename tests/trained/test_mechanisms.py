"""The runs behind chapter 16's robustness check (pe_lib.trained.mechanisms): the layout of a tiny sweep, each
stored quantity the one the library's functions give, the measures on hand-made inputs, and the stored results
still come from the current code, with one configuration trained again from scratch giving the same numbers."""

import pathlib

import numpy as np
import pytest

import pe_lib
from pe_lib.trained import mechanisms as mc
from pe_lib.trained import sweeps

STORED = pathlib.Path(__file__).resolve().parents[2] / "notebooks" / "results" / "16_mechanisms.json"
TINY = dict(seq_len=8, d_model=8, batch_size=4)


@pytest.fixture(scope="module")
def tiny():
    lines = []
    out = mc.mechanism_sweep(seeds=(1, 2), draws=2, steps=100, variants={"heads 2x4": {"n_heads": 2}},
                             progress=False, log=lines.append, **TINY)
    return out, lines


def test_a_tiny_sweep_layout(tiny):
    out, lines = tiny
    assert set(out["runs"]) == {"base", "steps x2", "draw 1", "heads 2x4"} and len(lines) == len(mc.MODELS)
    assert out["seeds"] == [1, 2] and out["code_version"] == mc.code_version()
    assert out["settings"] == mc.SETTINGS | TINY
    base = out["runs"]["base"]
    assert set(base) == set(mc.MODELS)
    assert set(base["sinusoidal"]) == {"accuracy 1x", "classifier block 1", "classifier block 2", "weight on k",
                                       "weight on k beyond L", "accuracy 2x", "position-position share",
                                       "commuting share"}
    assert set(base["RoPE"]) == {"accuracy 1x", "classifier block 1", "classifier block 2", "weight on k",
                                 "weight on k beyond L", "accuracy 2x"}
    assert set(base["learned"]) == {"accuracy 1x", "classifier block 1", "classifier block 2", "weight on k",
                                    "position-position share", "commuting share", "table change",
                                    "neighbour cosine"}
    assert set(base["learned, reverse"]) == {"accuracy 1x", "classifier block 1", "classifier block 2"}
    assert set(base["none"]) == {"accuracy 1x", "entropy ratio", "scalar probe block 1", "uniform scalar probe",
                                 "uniform accuracy share"}
    # every run keeps the first CHAPTER_SEEDS (3) seeds, here both
    assert all(len(v) == 2 for run in out["runs"].values() for v in run["none"].values())


def test_tiny_sweep_numbers_are_the_library_measures(tiny):
    out, _ = tiny
    settings = {key: value for key, value in (mc.SETTINGS | TINY).items() if key != "learning_rate"}
    grid = pe_lib.train_grid("lookback", "rope", seeds=(1, 2), learning_rates=(3e-3,), steps=(100, 200), offset=3,
                             progress=False, **settings)
    model = grid[3e-3, 100][1]
    base = out["runs"]["base"]["RoPE"]
    assert base["accuracy 1x"][1] == pytest.approx(pe_lib.task_accuracy(model, 8))
    assert base["accuracy 2x"][1] == pytest.approx(pe_lib.task_accuracy(model, 16))
    tokens = pe_lib.task_batch("lookback", 64, 8, seed=7)[0]
    attention = pe_lib.trained_attention(model, tokens).mean(axis=1)[:, 0]  # (blocks, L, L), one head
    assert base["weight on k"][1] == pytest.approx(max(attention[b][np.arange(3, 8), np.arange(0, 5)].mean()
                                                       for b in range(2)))
    # the other draw: other test sequences, another accuracy than the base's
    again = pe_lib.task_accuracy(grid[3e-3, 100][0], 8, seed=pe_lib.trained.training.EVAL_SEED + 1)
    assert out["runs"]["draw 1"]["RoPE"]["accuracy 1x"][0] == pytest.approx(again)
    twice = pe_lib.task_accuracy(grid[3e-3, 200][0], 8)
    assert out["runs"]["steps x2"]["RoPE"]["accuracy 1x"][0] == pytest.approx(twice)


def test_mean_entropy_ratio_of_uniform_and_of_one_hot_attention():
    n = 6
    uniform = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]
    assert mc._mean_entropy_ratio(uniform) == pytest.approx(1.0)
    assert mc._mean_entropy_ratio(np.eye(n)) == pytest.approx(0.0)
    # query 1 with weights (0.25, 0.75): entropy over ln 2, the only query (planted: ln(m) instead of ln(m + 1))
    two = np.array([[1.0, 0.0], [0.25, 0.75]])
    assert mc._mean_entropy_ratio(two) == pytest.approx(-(0.25 * np.log(0.25) + 0.75 * np.log(0.75)) / np.log(2))


def test_measure_refuses_an_unknown_model():
    with pytest.raises(ValueError, match="name"):
        mc.measure("alibi", None)
    with pytest.raises(ValueError, match="model"):
        mc.mechanism_sweep(models=("alibi",))


def test_the_code_version_follows_the_code_files():
    assert len(mc.code_version()) == 16 and "trained/mechanisms.py" in mc.CODE_FILES


# ---- the stored results -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def stored():
    return sweeps.load_results(STORED)


def test_stored_mechanisms_come_from_the_current_code(stored):
    assert stored["code_version"] == mc.code_version(), (
        "the code behind notebooks/results/16_mechanisms.json changed since it was stored: run make experiments")
    assert stored["settings"] == mc.SETTINGS and stored["seeds"] == list(mc.SEEDS)
    assert stored["variants"] == mc.VARIANTS
    assert set(stored["runs"]) == {"base", "steps x2", "heads 4x8", "heads 8x8"} | {
        f"draw {d}" for d in range(1, mc.DRAWS)}


def test_one_stored_configuration_again_from_scratch(stored):
    # the sinusoidal models with four heads of width 8, seeds 1-3, as the sweep trains and measures them
    steps = mc.MODELS["sinusoidal"][3]
    models = mc._train("sinusoidal", mc.SETTINGS | mc.VARIANTS["heads 4x8"], mc.SEEDS[:mc.CHAPTER_SEEDS], (steps,),
                       False)[mc.SETTINGS["learning_rate"], steps]
    new = mc._collect([mc.measure("sinusoidal", m) for m in models])
    old = stored["runs"]["heads 4x8"]["sinusoidal"]
    assert set(new) == set(old)
    for key in new:
        assert new[key] == pytest.approx(old[key], abs=0.02), key


def test_sweep_reads_each_run_with_its_settings_steps_and_draw(monkeypatch):
    """With training and measuring stood in for: the base keeps every seed at each model's own steps, "steps x2"
    the first three after twice them, each draw the first three on its sequences, each variant its change
    (planted: the variants trained with the base's settings)."""
    def train(name, settings, seeds, steps, progress):
        return {(settings["learning_rate"], n): tuple((name, settings["n_heads"], settings["d_model"], n, s)
                                                      for s in seeds) for n in steps}

    monkeypatch.setattr(mc, "_train", train)
    monkeypatch.setattr(mc, "measure", lambda name, model, draw=0: {"model": model, "draw": draw})
    out = mc.mechanism_sweep(models=("none",), seeds=(1, 2, 3, 4))  # no log: nothing printed
    runs = {name: out["runs"][name]["none"] for name in out["runs"]}
    assert runs["base"]["model"] == [("none", 1, 32, 1000, s) for s in (1, 2, 3, 4)]
    assert runs["steps x2"]["model"] == [("none", 1, 32, 2000, s) for s in (1, 2, 3)]
    assert runs["draw 2"] == {"model": runs["base"]["model"][:3], "draw": [2, 2, 2]}
    assert runs["heads 4x8"]["model"] == [("none", 4, 32, 1000, s) for s in (1, 2, 3)]
    assert runs["heads 8x8"]["model"] == [("none", 8, 64, 1000, s) for s in (1, 2, 3)]
