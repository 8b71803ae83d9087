"""The runs behind chapters 14 and 15's robustness check (pe_lib.trained.sweeps): their layout on tiny runs, the
variance-matched scale, and the stored results still come from the current code, with one configuration of each
stored table trained again from scratch giving the same numbers."""

import pathlib

import numpy as np
import pytest

import pe_lib
from pe_lib.trained import robustness as rb
from pe_lib.trained import sweeps

RESULTS = pathlib.Path(__file__).resolve().parents[2] / "notebooks" / "results"
SWEEP = RESULTS / "14_15_robustness.json"
SEARCH = RESULTS / "14_wider_search.json"
TINY = dict(seq_len=6, d_model=8, n_layers=1, n_heads=2, batch_size=2, steps=100)


def test_variance_matched_std_of_a_random_and_of_the_sinusoidal_table():
    rng = np.random.default_rng(0)
    assert sweeps.variance_matched_std(rng.normal(scale=0.3, size=(16, 4000))) == pytest.approx(0.3, rel=0.01)
    table = pe_lib.sinusoidal(16, 32)
    per_dim = [np.mean((table[:, k] - table[:, k].mean()) ** 2) for k in range(32)]  # population variances
    assert sum(per_dim) == pytest.approx(3.69, abs=0.005)  # the across-position variance the review measured
    assert sweeps.variance_matched_std(table) == pytest.approx(np.sqrt(sum(per_dim) * 16 / (15 * 32)))
    with pytest.raises(ValueError, match="at least 2 positions"):
        sweeps.variance_matched_std(np.ones((1, 4)))


def test_a_tiny_sweep_layout_and_variance_matched_arm():
    lines = []
    out = sweeps.robustness_sweep(arms={"lookback": ("learned, variance-matched", "t5"), "reverse": ("sinusoidal",)},
                              variants={"wide": {"n_heads": 1}}, seeds=(0, 1), progress=False, log=lines.append,
                              **TINY)
    assert set(out["runs"]) == {"base", "steps x2", "wide"} and out["seeds"] == [0, 1]
    assert out["code_version"] == sweeps.code_version() and len(lines) == 6
    t5 = out["runs"]["base"]["lookback"]["t5"]
    assert set(t5["scores"]) == {"1x", "2x", "4x"} and len(t5["scores"]["4x"]) == 2
    assert len(t5["scores"]["1x"][0]["right_per_sequence"]) == sweeps.N_SEQUENCES
    assert "right_per_sequence" not in out["runs"]["steps x2"]["lookback"]["t5"]["scores"]["1x"][0]
    assert set(out["runs"]["base"]["lookback"]["learned, variance-matched"]["scores"]) == {"1x"}
    assert set(out["runs"]["base"]["reverse"]["sinusoidal"]["scores"]) == {"1x"}
    # each stored number is the one the library's own scoring gives
    again = pe_lib.train_grid("lookback", "t5", seeds=(0, 1), learning_rates=(1e-2,),
                              steps=(100, 200), progress=False, **{k: v for k, v in TINY.items() if k != "steps"})
    model = again[1e-2, 100][1]
    assert rb.metric_values(t5, "accuracy 4x")[1] == pytest.approx(pe_lib.task_accuracy(model, 4 * TINY["seq_len"]))
    assert rb.metric_values(t5, "test loss")[1] == pytest.approx(pe_lib.task_loss(model, TINY["seq_len"]))
    wide = out["runs"]["wide"]["lookback"]["t5"]["scores"]["1x"]
    assert wide != t5["scores"]["1x"]  # another architecture, other numbers


def test_a_tiny_wider_search():
    lines = []
    out = sweeps.wider_search((("lookback", "alibi", 2),), seeds=(0,), learning_rates=(1e-3, 1e-2), steps=(100, 200),
                          progress=False, log=lines.append)
    assert list(out) == ["lookback alibi 2"] and len(lines) == 2  # one line per learning rate
    assert set(out["lookback alibi 2"]) == {"0.001 100", "0.001 200", "0.01 100", "0.01 200"}
    assert all(len(v["test"]) == 1 and v["validation"] > 0 for v in out["lookback alibi 2"].values())
    assert all(v["validation per seed"] == [v["validation"]] for v in out["lookback alibi 2"].values())


def test_save_and_load(tmp_path):
    sweeps.save_results({"a": [1, 2]}, tmp_path / "x.json")
    assert sweeps.load_results(tmp_path / "x.json") == {"a": [1, 2]}


def test_the_code_version_follows_the_code_files():
    assert len(sweeps.code_version()) == 16 and "trained/sweeps.py" in sweeps.CODE_FILES


# ---- the stored results -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def stored():
    return sweeps.load_results(SWEEP)


def test_stored_sweep_comes_from_the_current_code(stored):
    assert stored["code_version"] == sweeps.code_version(), (
        "the code behind notebooks/results/14_15_robustness.json changed since it was stored: run make experiments")
    assert stored["settings"] == sweeps.BASE and stored["seeds"] == list(sweeps.SEEDS)
    assert stored["variants"] == sweeps.VARIANTS
    search = sweeps.load_results(SEARCH)
    assert search["code_version"] == sweeps.code_version() and search["grid"] == {
        k: list(v) for k, v in sweeps.WIDER_GRID.items()}


def test_one_stored_sweep_configuration_again_from_scratch(stored):
    # the chapter's setting of T5 on lookback, every seed, as the sweep trains it
    again = sweeps.robustness_sweep(tasks=("lookback",), arms={"lookback": ("t5",)}, variants={}, progress=False)
    for name in ("base", "steps x2"):
        old, new = stored["runs"][name]["lookback"]["t5"], again["runs"][name]["lookback"]["t5"]
        for metric in ("accuracy 1x", "accuracy 2x", "accuracy 4x"):
            assert rb.metric_values(new, metric) == pytest.approx(rb.metric_values(old, metric), abs=0.02), metric
        assert rb.metric_values(new, "test loss") == pytest.approx(rb.metric_values(old, "test loss"), rel=0.05)
        assert np.abs(np.subtract(new["steps to 0.1"], old["steps to 0.1"])).max() <= 2


def test_one_stored_search_arm_again_from_scratch():
    # RoPE on reverse at its chosen rate, every number of steps, as the search trains it: one vmapped run of the
    # three seeds per learning rate, so this one rate alone gives the stored models again
    old = sweeps.load_results(SEARCH)["arms"]["reverse rope 4"]
    best = rb.best_in_grid(old)[0]
    assert best == "0.001 8000"
    new = sweeps.wider_search((("reverse", "rope", 4),), learning_rates=(1e-3,), progress=False)["reverse rope 4"]
    assert set(new) == {key for key in old if key.startswith("0.001 ")}
    for key in new:
        assert new[key]["validation per seed"] == pytest.approx(old[key]["validation per seed"], rel=0.02), key
        assert new[key]["test"] == pytest.approx(old[key]["test"], abs=0.03), key  # unconverged: chaotic


def test_each_arm_trains_its_encoding_and_scale():
    settings = sweeps.BASE | TINY
    for arm, encoding, std in (("learned, variance-matched", "learned",
                                sweeps.variance_matched_std(pe_lib.sinusoidal(TINY["seq_len"], TINY["d_model"]))),
                               ("learned", "learned", pe_lib.trained.training.LEARNED_INIT_STD),
                               ("rope", "rope", pe_lib.trained.training.LEARNED_INIT_STD)):
        grid = sweeps._train_arm("lookback", arm, settings, (0,), False)
        assert set(grid) == {(1e-2, 100), (1e-2, 200)}  # the base number of steps and twice it
        model = grid[1e-2, 100][0]
        assert model.encoding == encoding and model.config.learned_init_std == pytest.approx(std), arm


# The documented rules of the sweep's helpers on stand-ins, without training (issue 32 item 6): each test below
# failed with the named one-line bug planted in sweeps.py.

def test_score_counts_and_losses_by_hand(monkeypatch):
    """_score on logits set here: argmax right or wrong per scored position, the loss a log-sum-exp written out
    with math (planted: "sequences" as the number of scored positions)."""
    import math

    rng = np.random.default_rng(0)
    logits = rng.normal(size=(2, 5, 3)).astype(np.float32)  # 2 sequences, 5 positions, 3 classes
    counts = np.array([False, True, True, False, True])  # 3 scored positions
    targets = np.array([[2, 0, 0], [1, 2, 0]])  # argmax is [[2, 0, 1], [1, 0, 2]]: right per position 2, 1, 0
    monkeypatch.setattr(sweeps, "_evaluate", lambda model, seq_len, n, seed, max_offset: (logits, targets, counts))
    got = sweeps._score(None, 5, per_sequence=True)
    right, losses = [], []
    for b in range(2):
        row_right, row_loss = [], 0.0
        for j, pos in enumerate((1, 2, 4)):
            z = [float(x) for x in logits[b, pos]]
            row_right.append(int(max(range(3), key=lambda c: z[c]) == targets[b, j]))
            row_loss += math.log(sum(math.exp(x) for x in z)) - z[targets[b, j]]
        right.append(row_right)
        losses.append(row_loss / 3)
    assert got["right"] == sum(map(sum, right)) and got["targets"] == 6 and got["sequences"] == 2
    assert got["by_position"] == [right[0][j] + right[1][j] for j in range(3)]
    assert got["right_per_sequence"] == [sum(r) for r in right]
    assert got["loss"] == pytest.approx(sum(losses) / 2, rel=1e-6)
    assert got["loss_per_sequence"] == pytest.approx(losses, rel=1e-4)  # stored to 5 digits
    assert "right_per_sequence" not in sweeps._score(None, 5, per_sequence=False)


def test_measure_reads_the_losses_up_to_its_steps_and_the_lengths_of_its_arm(monkeypatch):
    """Losses 1.0 for 10 steps, then 0.0: the 20-step mean is below 0.1 from step 29 on (at most one 1.0 in the
    window ending there), so "steps to 0.1" is 29 when read over 40 steps and -1 over 25 (planted: the losses
    read beyond ``steps``); lookback is scored at 1x, 2x, 4x, a learned table only at 1x."""
    class Model:
        seq_len = 4
        losses = np.array([1.0] * 10 + [0.0] * 30)

    monkeypatch.setattr(sweeps, "_score", lambda model, seq_len, per_sequence: (seq_len, per_sequence))
    assert sweeps._measure("lookback", "rope", [Model(), Model()], 40)["steps to 0.1"] == [29, 29]
    assert sweeps._measure("lookback", "rope", [Model()], 25)["steps to 0.1"] == [-1]
    scores = sweeps._measure("lookback", "rope", [Model()], 40, per_sequence=True)["scores"]
    assert scores == {"1x": [(4, True)], "2x": [(8, True)], "4x": [(16, True)]}
    assert list(sweeps._measure("lookback", "learned, variance-matched", [Model()], 40)["scores"]) == ["1x"]
    assert list(sweeps._measure("reverse", "rope", [Model()], 40)["scores"]) == ["1x"]


def test_sweep_keeps_per_sequence_scores_of_the_base_only_and_reads_twice_the_steps(monkeypatch):
    """With training and scoring stood in for: the base is read after BASE's steps with per-sequence scores,
    "steps x2" from the same run after twice the steps, each variant with its change (planted: per-sequence
    scores for every run)."""
    monkeypatch.setattr(sweeps, "_train_arm", lambda task, arm, config, seeds, progress: {
        (config["learning_rate"], n): (arm, config["n_heads"], config["d_model"], n)
        for n in (config["steps"], 2 * config["steps"])})
    monkeypatch.setattr(sweeps, "_measure", lambda task, arm, models, steps, per_sequence=False:
                        {"models": models, "steps": steps, "per_sequence": per_sequence})
    lines = []
    out = sweeps.robustness_sweep(tasks=("lookback",), arms={"lookback": ("rope",)}, seeds=(0, 1), log=lines.append)
    runs = {name: out["runs"][name]["lookback"]["rope"] for name in out["runs"]}
    assert runs["base"] == {"models": ("rope", 4, 32, 500), "steps": 500, "per_sequence": True}
    assert runs["steps x2"] == {"models": ("rope", 4, 32, 1000), "steps": 1000, "per_sequence": False}
    assert runs["heads 1x32"] == {"models": ("rope", 1, 32, 500), "steps": 500, "per_sequence": False}
    assert runs["heads 8x8"] == {"models": ("rope", 8, 64, 500), "steps": 500, "per_sequence": False}
    assert out["seeds"] == [0, 1] and len(lines) == 3


def test_wider_search_scores_a_setting_by_its_mean_validation_loss(monkeypatch):
    """Two seeds with validation losses 0.2 and 0.6 score 0.4 (planted: their minimum)."""
    from pe_lib.trained import protocol, training

    monkeypatch.setattr(sweeps, "train_grid", lambda *a, learning_rates, steps, **k: {
        (learning_rates[0], steps[0]): ("m0", "m1")})
    monkeypatch.setattr(protocol, "validation_losses",
                        lambda grid, seq_len: {key: np.array([0.2, 0.6]) for key in grid})
    monkeypatch.setattr(training, "task_accuracy", lambda model, seq_len: {"m0": 0.5, "m1": 0.75}[model])
    out = sweeps.wider_search((("lookback", "alibi", 8),), learning_rates=(0.01, 0.03), steps=(500,))
    expected = {"validation": pytest.approx(0.4), "validation per seed": [0.2, 0.6], "test": [0.5, 0.75]}
    assert out == {"lookback alibi 8": {"0.01 500": expected, "0.03 500": expected}}  # one run per rate
