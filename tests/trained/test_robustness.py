"""The robustness check of chapters 14 and 15 (pe_lib.trained.robustness): verdicts per factor on planted data
(a claim that holds only with 4 heads of width 8 is flagged), the bootstrap over test sequences, what the
stored sweep says of the chapters' claims."""

import math
import pathlib

import numpy as np
import pytest

from pe_lib.trained import robustness as rb

SWEEP = pathlib.Path(__file__).resolve().parents[2] / "notebooks" / "results" / "14_15_robustness.json"


def _score(right_per_sequence, targets_per_sequence=10, by_position=None, losses=None):
    right = np.asarray(right_per_sequence)
    out = {"right": int(right.sum()), "targets": int(right.size * targets_per_sequence),
           "sequences": int(right.size), "loss": float(np.mean(losses)) if losses is not None else 0.5,
           "by_position": by_position or [int(right.size)] * 3}
    out["right_per_sequence"] = right.tolist()
    out["loss_per_sequence"] = list(losses) if losses is not None else [0.5] * right.size
    return out


def _arm(accuracies, n_sequences=20, steps=None, factors=("1x",)):
    """An arm whose seed s gets accuracies[s] at each factor: every sequence scored alike (10 targets each)."""
    scores = [_score([round(10 * a)] * n_sequences) for a in accuracies]
    return {"scores": {f: scores for f in factors}, "steps to 0.1": steps or [100] * len(accuracies)}


def _planted(t5_wide, rope_wide, *, t5=(0.8, 0.75, 0.77, 0.8, 0.8, 0.8), rope=(0.6, 0.6, 0.7, 0.6, 0.6, 0.6)):
    """A sweep in which T5 beats RoPE at 4x in the chapter's setting, with six seeds and twice the steps; the
    1-head variant gets the given accuracies."""
    def runs(a, b):
        return {"lookback": {"t5": _arm(a, factors=("1x", "4x")), "rope": _arm(b, factors=("1x", "4x"))}}

    return {"runs": {"base": runs(t5, rope), "steps x2": runs(t5, rope), "heads 1x32": runs(t5_wide, rope_wide)}}


T5_AHEAD = rb.Claim("T5 is ahead of RoPE at 4x", "lookback", "accuracy 4x", "t5", "rope")


def test_a_claim_that_depends_on_head_width_is_flagged():
    wide_rope_wins = _planted(t5_wide=(0.7, 0.8, 0.7), rope_wide=(0.8, 0.8, 0.9))
    row = rb.verdicts([T5_AHEAD], wide_rope_wins)[T5_AHEAD.text]
    assert row == {"chapter": "holds", "heads 1x32": "FAILS", "steps x2": "holds", "seeds 0-5": "holds",
                   "bootstrap": "holds"}
    assert rb.failing_factors(row) == ["heads 1x32"]
    assert "depends on: heads 1x32" in rb.verdict_table({T5_AHEAD.text: row})
    # the same claim, with T5 ahead in the wide heads too: nothing to flag
    both = rb.verdicts([T5_AHEAD], _planted(t5_wide=(0.9, 0.9, 0.9), rope_wide=(0.8, 0.8, 0.8)))[T5_AHEAD.text]
    assert rb.failing_factors(both) == [] and "depends" not in rb.verdict_table({T5_AHEAD.text: both})


def test_seed_verdicts_every_seed_mean_or_fails():
    assert rb.seed_verdict([0.1, 0.2]) == "holds"
    assert rb.seed_verdict([0.3, -0.1]) == "on average"  # mean 0.1
    assert rb.seed_verdict([0.1, -0.3]) == "FAILS"
    assert rb.seed_verdict([0.0, 0.0]) == "FAILS"  # a tie does not hold
    assert rb.seed_verdict([np.inf, 5.0]) == "holds"  # never reached by the other arm
    with pytest.raises(ValueError, match="at least one seed"):
        rb.seed_verdict([])


def test_a_claim_that_holds_only_on_average_over_six_seeds():
    data = _planted(t5_wide=(0.9,) * 3, rope_wide=(0.8,) * 3, t5=(0.8, 0.8, 0.8, 0.5, 0.8, 0.8),
                    rope=(0.6, 0.6, 0.6, 0.7, 0.6, 0.6))
    assert rb.verdicts([T5_AHEAD], data)[T5_AHEAD.text]["seeds 0-5"] == "on average"


def test_margins_sign_thresholds_and_never_reached():
    runs = {"lookback": {"t5": _arm([0.8, 0.6], steps=[50, -1]), "rope": _arm([0.7, 0.7], steps=[60, -1])}}
    assert rb.margins(rb.Claim("x", "lookback", "accuracy 1x", "t5", "rope"), runs) == pytest.approx([0.1, -0.1])
    assert rb.margins(rb.Claim("x", "lookback", "accuracy 1x", "t5", 0.65, False), runs) == pytest.approx(
        [-0.15, 0.05])
    fewer = rb.margins(rb.Claim("x", "lookback", "steps to 0.1", "t5", "rope", False), runs)
    assert fewer.tolist() == [10.0, 0.0]  # 50 vs 60 steps; neither reached the threshold: a tie
    assert rb.margins(rb.Claim("x", "lookback", "accuracy 1x", "t5", "rope"), runs, n_seeds=1).shape == (1,)
    with pytest.raises(ValueError, match="Claim"):
        rb.margins(("x", "lookback"), runs)


def test_metric_values_of_each_metric():
    run = {"scores": {"1x": [_score([5, 7], by_position=[2, 0, 1], losses=[0.25, 0.75])]}, "steps to 0.1": [-1]}
    assert rb.metric_values(run, "accuracy 1x").tolist() == [0.6]  # 12 of 20 targets
    assert rb.metric_values(run, "accuracy at the ends").tolist() == [0.75]  # (2 + 1) / (2 sequences * 2 ends)
    assert rb.metric_values(run, "test loss").tolist() == [0.5]
    assert rb.metric_values(run, "steps to 0.1").tolist() == [math.inf]
    with pytest.raises(ValueError, match="not scored at 4x"):
        rb.metric_values(run, "accuracy 4x")
    with pytest.raises(ValueError, match="metric"):
        rb.metric_values(run, "bleu")


def test_bootstrap_of_a_sure_and_of_a_noisy_difference():
    sure = {"lookback": {"t5": _arm([0.8] * 3), "rope": _arm([0.7] * 3)}}
    assert rb.bootstrap_margin(T5_AHEAD.__class__("x", "lookback", "accuracy 1x", "t5", "rope"), sure) == \
        pytest.approx((0.1, 0.1))
    rng = np.random.default_rng(1)
    noisy = [_score(rng.integers(0, 11, size=200)) for _ in range(3)]
    same = {"lookback": {"t5": {"scores": {"1x": noisy}}, "rope": {"scores": {"1x": noisy[::-1]}}}}
    claim = rb.Claim("x", "lookback", "accuracy 1x", "t5", "rope")
    low, high = rb.bootstrap_margin(claim, same)
    assert low < 0 < high and rb.interval_verdict(low, high) == "within noise"
    # the interval's width: about 2 x 1.96 x sd / sqrt(n) of the per-sequence differences (mean of 3 seeds)
    diff = np.mean([np.array(a["right_per_sequence"]) - np.array(b["right_per_sequence"])
                    for a, b in zip(noisy, noisy[::-1], strict=True)], axis=0) / 10
    assert high - low == pytest.approx(2 * 1.96 * diff.std() / np.sqrt(diff.size), rel=0.15)
    # a claim about a number resamples one arm; a loss claim resamples the losses
    assert rb.bootstrap_margin(rb.Claim("x", "lookback", "accuracy 1x", "t5", 0.5), sure) == pytest.approx((0.3, 0.3))
    losses = {"lookback": {"t5": {"scores": {"1x": [_score([1, 1], losses=[0.1, 0.3])]}},
                           "rope": {"scores": {"1x": [_score([1, 1], losses=[0.2, 0.2])]}}}}
    low, high = rb.bootstrap_margin(rb.Claim("x", "lookback", "test loss", "t5", "rope", False), losses, n_seeds=1)
    assert low == pytest.approx(-0.1) and high == pytest.approx(0.1)


def test_bootstrap_refusals_and_what_it_cannot_resample():
    runs = {"lookback": {"t5": _arm([0.8]), "rope": _arm([0.7])}}
    steps = rb.Claim("x", "lookback", "steps to 0.1", "t5", "rope", False)
    assert all(math.isnan(x) for x in rb.bootstrap_margin(steps, runs))
    assert rb.interval_verdict(math.nan, math.nan) == "n/a"
    assert rb.interval_verdict(-0.3, -0.1) == "FAILS" and rb.interval_verdict(0.1, 0.2) == "holds"
    claim = rb.Claim("x", "lookback", "accuracy 1x", "t5", "rope")
    for bad, match in ((dict(level=1.0), "level"), (dict(n_resamples=0), "n_resamples")):
        with pytest.raises(ValueError, match=match):
            rb.bootstrap_margin(claim, runs, **bad)
    with pytest.raises(ValueError, match="Claim"):
        rb.bootstrap_margin("x", runs)
    per_seed_only = {"lookback": {"t5": {"scores": {"1x": [{"right": 1}]}}, "rope": _arm([0.7])}}
    with pytest.raises(ValueError, match="per seed only"):
        rb.bootstrap_margin(claim, per_seed_only)


def test_claims_name_what_exists():
    with pytest.raises(ValueError, match="task"):
        rb.Claim("x", "copy", "accuracy 1x", "t5", "rope")
    with pytest.raises(ValueError, match="arm"):
        rb.Claim("x", "reverse", "accuracy 1x", "alibi", "rope")
    with pytest.raises(ValueError, match="than"):
        rb.Claim("x", "lookback", "accuracy 1x", "t5", "alibi")
    for bad in (True, math.nan, None):
        with pytest.raises(ValueError, match="than must be"):
            rb.Claim("x", "lookback", "accuracy 1x", "t5", bad)
    for claim in rb.CHAPTER_14_CLAIMS + rb.CHAPTER_15_CLAIMS:
        assert len(claim.text) <= 72  # one line of a chapter's output on a desktop page


def _grid(best):
    """A search of 3 rates x 3 numbers of steps whose validation loss is lowest (0) at ``best``, else 1."""
    return {f"{lr:g} {n}": {"validation": 0.0 if (lr, n) == best else 1.0}
            for lr in (0.003, 0.01, 0.03) for n in (500, 1000, 2000)}


def test_best_in_grid_says_whether_the_best_lies_inside():
    assert rb.best_in_grid(_grid((0.01, 1000))) == ("0.01 1000", True, True)
    assert rb.best_in_grid(_grid((0.03, 2000))) == ("0.03 2000", False, False)
    with pytest.raises(ValueError, match="non-empty"):
        rb.best_in_grid({})


def test_the_stored_sweep_flags_what_the_review_found():
    # issue 28's errors, read from the stored runs: T5 ahead of RoPE at 4x only with 4 heads of width 8; T5 far
    # below RoPE at the two ends of reverse; the learned table's test loss below the sinusoids' on lookback
    stored = rb.load_results(SWEEP)
    table = rb.verdicts(rb.CHAPTER_15_CLAIMS + rb.CHAPTER_14_CLAIMS, stored)
    assert table["T5 is ahead of RoPE at 4x"]["heads 1x32"] == "FAILS"
    assert table["T5 is ahead of RoPE at 4x"]["chapter"] == "holds"
    assert table["reverse: RoPE gets the two end positions right more often than T5"]["chapter"] == "holds"
    assert table["lookback: learned ends at a lower test loss than sinusoidal"]["seeds 0-5"] == "holds"



# Rules of the docstrings that the tests above would pass under another rule too (issue 32 item 6); each test
# below failed with the named one-line bug planted in robustness.py.

def test_best_in_grid_inside_means_strictly_between_the_ends_of_each_axis():
    # the smallest rate is not inside, the middle number of steps is (planted: rates[0] <= lr)
    assert rb.best_in_grid(_grid((0.003, 1000))) == ("0.003 1000", False, True)
    # the middle rate is inside, the largest number of steps is not
    assert rb.best_in_grid(_grid((0.01, 2000))) == ("0.01 2000", True, False)
    assert rb.best_in_grid(_grid((0.01, 500))) == ("0.01 500", True, False)


def test_metric_values_read_the_length_the_metric_names():
    # seed accuracies 0.9 at the training length, 0.6 at 2x, 0.3 at 4x (planted: 2x read from "1x")
    run = {"scores": {"1x": [_score([9, 9])], "2x": [_score([6, 6])], "4x": [_score([3, 3])]}, "steps to 0.1": [5]}
    assert rb.metric_values(run, "accuracy 1x").tolist() == [0.9]
    assert rb.metric_values(run, "accuracy 2x").tolist() == [0.6]
    assert rb.metric_values(run, "accuracy 4x").tolist() == [0.3]


def test_on_average_is_the_mean_over_seeds_not_the_median():
    # margins 1.0, -0.1, -0.1: mean 0.267 > 0, median -0.1 < 0 (planted: np.median)
    assert rb.seed_verdict([1.0, -0.1, -0.1]) == "on average"
    # and the other way round: median 0.1 > 0, mean -0.267 < 0
    assert rb.seed_verdict([-1.0, 0.1, 0.1]) == "FAILS"


def test_interval_verdict_contains_zero_at_either_end():
    # an interval that touches 0 contains it: neither above nor below (planted: low >= 0, high <= 0)
    assert rb.interval_verdict(0.0, 0.2) == "within noise"
    assert rb.interval_verdict(-0.2, 0.0) == "within noise"
    assert rb.interval_verdict(1e-12, 0.2) == "holds" and rb.interval_verdict(-0.2, -1e-12) == "FAILS"


def test_bootstrap_draws_one_resample_for_every_seed():
    # seed 0's per-sequence margins are 1.1 and -0.9, seed 1's the reverse: each sequence's mean over the two seeds
    # is 0.1, so resampling the same sequences in both seeds gives exactly 0.1 every time; independent resamples
    # per seed would spread the mean to about +-1 (planted: a resample per seed)
    a = {"scores": {"1x": [_score([11, 1] * 10), _score([1, 11] * 10)]}}  # 10 targets per sequence: 1.1, 0.1
    b = {"scores": {"1x": [_score([0, 10] * 10), _score([10, 0] * 10)]}}
    runs = {"lookback": {"t5": a, "rope": b}}
    low, high = rb.bootstrap_margin(rb.Claim("x", "lookback", "accuracy 1x", "t5", "rope"), runs, n_seeds=2)
    assert low == pytest.approx(0.1) and high == pytest.approx(0.1)


def test_bootstrap_interval_is_the_documented_percentile_interval():
    # the interval written out from the docstring: resample indices from default_rng(seed), mean over seeds and
    # the resampled sequences, the (1 - level)/2 and (1 + level)/2 quantiles (planted: quantiles 1 - level, level)
    rng = np.random.default_rng(3)
    per_seq = [rng.integers(0, 11, size=40) for _ in range(3)]
    runs = {"lookback": {"t5": {"scores": {"1x": [_score(r) for r in per_seq]}}}}
    diff = np.array(per_seq) / 10 - 0.5  # (seeds, sequences): accuracy minus the number 0.5
    picks = np.random.default_rng(7).integers(0, 40, size=(300, 40))
    means = np.array([diff[:, p].mean() for p in picks])
    for level in (0.5, 0.9):
        expected = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
        got = rb.bootstrap_margin(rb.Claim("x", "lookback", "accuracy 1x", "t5", 0.5), runs, n_resamples=300,
                                  seed=7, level=level)
        assert got == pytest.approx(tuple(expected), abs=1e-12)


def test_bootstrap_of_a_lower_is_better_claim_has_the_claims_sign():
    # T5's loss is 0.1 below RoPE's on every sequence: "T5 lower" holds by +0.1 (planted: the sign of higher=True)
    losses = {"lookback": {"t5": {"scores": {"1x": [_score([1, 1], losses=[0.1, 0.3])]}},
                           "rope": {"scores": {"1x": [_score([1, 1], losses=[0.2, 0.4])]}}}}
    low, high = rb.bootstrap_margin(rb.Claim("x", "lookback", "test loss", "t5", "rope", False), losses, n_seeds=1)
    assert low == pytest.approx(0.1) and high == pytest.approx(0.1)
    assert rb.interval_verdict(low, high) == "holds"


def test_the_ends_are_not_a_mean_over_sequences_so_not_bootstrapped():
    runs = {"lookback": {"t5": _arm([0.8] * 3), "rope": _arm([0.7] * 3)}}
    ends = rb.Claim("x", "lookback", "accuracy at the ends", "t5", "rope")
    assert all(math.isnan(x) for x in rb.bootstrap_margin(ends, runs))  # planted: only "steps to 0.1" -> nan


def test_chapter_and_variants_use_the_first_three_seeds_and_seeds_0_5_all_six():
    # seed 3 (not one of the chapter's) reverses the claim in the base and in the 1-head runs: the chapter's
    # factor and the variant still hold in the first three seeds (planted: either read with all six seeds)
    t5, rope = (0.8, 0.8, 0.8, 0.5, 0.8, 0.8), (0.6, 0.6, 0.6, 0.7, 0.6, 0.6)
    row = rb.verdicts([T5_AHEAD], _planted(t5_wide=t5, rope_wide=rope, t5=t5, rope=rope))[T5_AHEAD.text]
    assert row["chapter"] == "holds" and row["heads 1x32"] == "holds" and row["steps x2"] == "holds"
    assert row["seeds 0-5"] == "on average"


def test_a_claim_with_no_interval_is_not_flagged_for_it():
    # "steps to 0.1" has no bootstrap ("n/a"): not a condition its sentence must state (planted: "n/a" flagged)
    steps = rb.Claim("T5 learns first", "lookback", "steps to 0.1", "t5", "rope", False)
    data = {"runs": {"base": {"lookback": {"t5": _arm([0.8] * 3, steps=[50] * 3),
                                           "rope": _arm([0.7] * 3, steps=[90] * 3)}}}}
    row = rb.verdicts([steps], data)[steps.text]
    assert row == {"chapter": "holds", "seeds 0-5": "holds", "bootstrap": "n/a"}
    assert rb.failing_factors(row) == []
    assert "depends" not in rb.verdict_table({steps.text: row})


# ---- the wider search's steps, and chapter 16's findings ----------------------------------------------------

def test_last_doubling_gain_reads_the_best_rate_and_its_two_longest_runs():
    # best: rate 0.01 at 2000 steps; its runs at 1000 and 2000 steps give per-seed drops 0.3 and 0.1 (mean 0.2),
    # its seeds at 2000 steps span 0.5 - 0.4 = 0.1; rate 0.03 (worse) must not be read (planted: any rate)
    search = {"0.01 500": {"validation": 1.5, "validation per seed": [1.5, 1.5]},
              "0.01 1000": {"validation": 0.65, "validation per seed": [0.7, 0.6]},
              "0.01 2000": {"validation": 0.45, "validation per seed": [0.4, 0.5]},
              "0.03 1000": {"validation": 2.0, "validation per seed": [2.0, 2.0]},
              "0.03 2000": {"validation": 0.9, "validation per seed": [0.9, 0.9]}}
    drop, spread = rb.last_doubling_gain(search)
    assert drop == pytest.approx(0.2) and spread == pytest.approx(0.1)
    with pytest.raises(ValueError, match="one number of steps"):
        rb.last_doubling_gain({"0.01 500": {"validation": 1.0, "validation per seed": [1.0]}})


def _found(values):
    """A stand-in for a mechanism sweep: ``values[run][model]`` -> that run's per-seed quantity "q"."""
    return {"runs": {run: {model: {"q": v} for model, v in models.items()} for run, models in values.items()}}


def test_a_finding_that_depends_on_head_width_is_flagged():
    finding = rb.Finding("RoPE's q above 0.5", "RoPE", "q", 0.5)
    # seed 4, beyond the chapter's three, misses (planted: "seeds 1-6" read over the first three only)
    results = _found({"base": {"RoPE": [0.9, 0.8, 0.7, 0.4, 0.9, 0.8]}, "steps x2": {"RoPE": [0.9, 0.9, 0.9]},
                      "heads 4x8": {"RoPE": [0.9, 0.2, 0.3]}, "heads 8x8": {"RoPE": [0.6, 0.7, 0.4]},
                      "draw 1": {"RoPE": [0.8, 0.8, 0.8]}, "draw 2": {"RoPE": [0.9, 0.4, 0.9]}})
    row = rb.finding_verdicts([finding], results)[finding.text]
    assert row == {"chapter": "holds", "heads 4x8": "FAILS", "heads 8x8": "on average", "steps x2": "holds",
                   "seeds 1-6": "on average", "other draws": "on average"}
    assert rb.failing_factors(row) == ["heads 4x8", "heads 8x8", "seeds 1-6", "other draws"]


def test_a_finding_against_another_model_and_below_a_number():
    above = rb.Finding("RoPE ahead of sinusoidal", "RoPE", "q", "sinusoidal")
    below = rb.Finding("sinusoidal's q below 0.5", "sinusoidal", "q", 0.5, False)
    results = _found({"base": {"RoPE": [0.9, 0.5, 0.9], "sinusoidal": [0.4, 0.6, 0.3]}})
    assert rb.finding_margins(above, results["runs"]["base"]).tolist() == pytest.approx([0.5, -0.1, 0.6])
    assert rb.finding_margins(below, results["runs"]["base"]).tolist() == pytest.approx([0.1, -0.1, 0.2])
    table = rb.finding_verdicts([above, below], results)
    assert table == {above.text: {"chapter": "on average", "seeds 1-6": "on average"},
                     below.text: {"chapter": "on average", "seeds 1-6": "on average"}}  # no other run: left out
    # a quantity or a model not measured in a run gives no margin there
    assert rb.finding_margins(above, {"RoPE": {"q": [1.0]}}).size == 0
    assert rb.finding_margins(rb.Finding("x", "none", "q", 0.5), {"RoPE": {"q": [1.0]}}).size == 0


def test_findings_name_what_exists():
    with pytest.raises(ValueError, match="model"):
        rb.Finding("x", "alibi", "q", 0.5)
    with pytest.raises(ValueError, match="than"):
        rb.Finding("x", "RoPE", "q", "t5")
    for bad in (True, math.nan, None):
        with pytest.raises(ValueError, match="than must be"):
            rb.Finding("x", "RoPE", "q", bad)
    with pytest.raises(ValueError, match="Finding"):
        rb.finding_margins("RoPE", {})
    for finding in rb.CHAPTER_16_FINDINGS:
        assert len(finding.text) <= 60  # one line of the chapter's output on a phone-wide page


def test_mechanism_values_reads_one_run():
    results = _found({"base": {"RoPE": [0.25, 0.5]}})
    assert rb.mechanism_values(results, "base", "RoPE", "q").tolist() == [0.25, 0.5]
