r"""Does a conclusion of chapters 14 and 15 survive what a referee would vary? A claim re-tested per factor.

A sentence such as "T5's bias extrapolates best" was measured at one setting: four heads of width 8,
500 steps, seeds 0-2, 256 test sequences. Each of those is a choice.
:func:`pe_lib.trained.sweeps.robustness_sweep` trains the chapters' models once more with each choice
varied on its own (one head of width 32, eight heads of width 8, twice the steps, six seeds) and measures
what the claims need; :func:`verdicts` re-tests every :class:`Claim` under each factor, including the test
sequences' own sampling error (a bootstrap over them, :func:`bootstrap_margin`), and :func:`verdict_table`
prints the verdicts.

A claim compares one arm's metric with another arm's, or with a number. Its *margin* in one seed is
the amount by which it holds (:func:`margins`: positive where it holds, in the metric's unit). Under a
factor the verdict is

* ``"holds"`` -- the margin is positive in every seed;
* ``"on average"`` -- positive on the mean over seeds, not in every seed;
* ``"FAILS"`` -- not positive on the mean;

and for the sampling error of the test sequences ``"holds"`` when the 95% bootstrap interval of the
mean margin lies above 0, ``"within noise"`` when it contains 0, ``"FAILS"`` when it lies below.
:func:`failing_factors` lists the factors under which a claim did not hold: the conditions its sentence
must state. The runs are those of :mod:`pe_lib.trained.sweeps`, which ``make experiments`` stores and the
chapters load (:func:`load_results`).

Chapter 16's findings, about how the trained models use position, are re-tested the same way: a
:class:`Finding` compares a quantity that :func:`pe_lib.trained.mechanisms.measure` returns with a number or
with another model's, and :func:`finding_verdicts` gives its verdict per factor of
:data:`pe_lib.trained.mechanisms.FACTORS` (another head width, twice the steps, six seeds, other draws of the
sequences the chapter evaluates on) in the runs of :func:`pe_lib.trained.mechanisms.mechanism_sweep`.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .._validate import check_choice, check_finite_array, check_positive_int
from .mechanisms import CHAPTER_SEEDS as MECHANISM_SEEDS
from .mechanisms import FACTORS as MECHANISM_FACTORS
from .mechanisms import MODELS
from .sweeps import ARMS, TASKS, load_results, variance_matched_std  # noqa: F401 (the chapters read them here)

CHAPTER_SEEDS = 3  # every factor but "seeds" uses the first three seeds, as the chapters do
FACTORS = ("chapter", "heads 1x32", "heads 8x8", "steps x2", "seeds 0-5", "bootstrap")
BOOTSTRAP = dict(n_resamples=2000, seed=0)
METRICS = ("accuracy 1x", "accuracy 2x", "accuracy 4x", "accuracy at the ends", "test loss", "steps to 0.1")


@dataclasses.dataclass(frozen=True)
class Claim:
    """One sentence of a chapter as a comparison: ``arm``'s ``metric`` on ``task`` is above (``higher=True``)
    or below ``than``, another arm's value of the same metric in the same seed or a number."""

    text: str
    task: str
    metric: str
    arm: str
    than: str | float
    higher: bool = True

    def __post_init__(self):
        check_choice(self.task, TASKS, name="task")
        check_choice(self.metric, METRICS, name="metric")
        arms = ARMS[self.task]
        check_choice(self.arm, arms, name="arm")
        if isinstance(self.than, str):
            check_choice(self.than, arms, name="than")
        elif isinstance(self.than, bool) or not isinstance(self.than, (int, float)) or not math.isfinite(self.than):
            raise ValueError(f"than must be an arm of {self.task} {arms} or a finite number, got {self.than!r}")


def best_in_grid(search: dict) -> tuple[str, bool, bool]:
    """The setting ``"lr steps"`` of lowest validation loss in one arm's entry of
    :func:`pe_lib.trained.sweeps.wider_search`, and
    whether its learning rate and its number of steps lie inside the grid (not at its smallest or largest)."""
    if not isinstance(search, dict) or not search:
        raise ValueError(f"search must be a non-empty dict of 'lr steps' -> scores, got {search!r}")
    best = min(search, key=lambda key: search[key]["validation"])
    rates = sorted({float(key.split()[0]) for key in search})
    steps = sorted({int(key.split()[1]) for key in search})
    lr, n = float(best.split()[0]), int(best.split()[1])
    return best, rates[0] < lr < rates[-1], steps[0] < n < steps[-1]


def last_doubling_gain(search: dict) -> tuple[float, float]:
    r"""Whether the number of steps of one arm's entry of :func:`pe_lib.trained.sweeps.wider_search` has
    reached a plateau: at the learning rate of its best setting (:func:`best_in_grid`), the mean over seeds of
    the drop in validation loss from the second-longest run to the longest,
    :math:`\overline{\ell_{n'} - \ell_{n}}`, and the spread of the seeds' validation losses at the longest,
    :math:`\max - \min`. A drop within the spread is a plateau; a larger one means that more steps would still
    help. Returns ``(drop, spread)`` in nats."""
    best, _, _ = best_in_grid(search)
    rate = best.split()[0]
    steps = sorted(int(key.split()[1]) for key in search if key.split()[0] == rate)
    if len(steps) < 2:
        raise ValueError(f"the search has one number of steps at rate {rate}: nothing to compare")
    last, before = (np.asarray(search[f"{rate} {n}"]["validation per seed"], dtype=float) for n in steps[:-3:-1])
    return float((before - last).mean()), float(last.max() - last.min())


def metric_values(run: dict, metric: str) -> np.ndarray:
    """One arm's per-seed values of ``metric`` (:data:`METRICS`) from a run of
    :func:`pe_lib.trained.sweeps.robustness_sweep`:
    accuracies in [0, 1], the test loss in nats, steps to the loss threshold (``inf`` if never reached)."""
    metric = check_choice(metric, METRICS, name="metric")
    if metric == "steps to 0.1":
        steps = np.array(run["steps to 0.1"], dtype=float)
        return np.where(steps < 0, np.inf, steps)
    factor = {"accuracy 2x": "2x", "accuracy 4x": "4x"}.get(metric, "1x")
    if factor not in run["scores"]:
        raise ValueError(f"this arm was not scored at {factor} the training length (a learned table has no rows "
                         f"beyond it), so it has no {metric!r}")
    scores = run["scores"][factor]
    if metric == "test loss":
        return np.array([s["loss"] for s in scores])
    if metric == "accuracy at the ends":  # the first and the last position
        return np.array([(s["by_position"][0] + s["by_position"][-1]) / (2 * s["sequences"]) for s in scores])
    return np.array([s["right"] / s["targets"] for s in scores])


def _per_sequence(run: dict, metric: str) -> np.ndarray:
    """``(seeds, sequences)``: the metric's value on each test sequence (an accuracy or a loss) in each seed."""
    factor = {"accuracy 2x": "2x", "accuracy 4x": "4x"}.get(metric, "1x")
    scores = run["scores"][factor]
    if "right_per_sequence" not in scores[0]:
        raise ValueError("this run stored its scores per seed only, not per test sequence (only the base does)")
    if metric == "test loss":
        return np.array([s["loss_per_sequence"] for s in scores])
    return np.array([np.array(s["right_per_sequence"]) / (s["targets"] / s["sequences"]) for s in scores])


def margins(claim: Claim, runs: dict, n_seeds: int | None = None) -> np.ndarray:
    r"""Per seed, by how much ``claim`` holds in ``runs`` (``runs[task][arm]``, one entry of a sweep's
    ``"runs"``): :math:`\pm(v_\text{arm} - v_\text{than})`, the sign such that a positive margin means the
    claim holds; over the first ``n_seeds`` seeds (all by default). Two arms that never reach a loss threshold
    tie (margin 0). Returns ``(seeds,)`` floats."""
    if not isinstance(claim, Claim):
        raise ValueError(f"claim must be a pe_lib.trained.robustness.Claim, got {type(claim).__name__}")
    a = metric_values(runs[claim.task][claim.arm], claim.metric)
    b = (metric_values(runs[claim.task][claim.than], claim.metric) if isinstance(claim.than, str)
         else np.full_like(a, float(claim.than)))
    if n_seeds is not None:
        a, b = a[:n_seeds], b[:n_seeds]
    with np.errstate(invalid="ignore"):
        diff = np.where(a == b, 0.0, a - b)  # inf - inf (neither reached the threshold) is a tie
    return diff if claim.higher else -diff


def seed_verdict(margin) -> str:
    """``"holds"`` if every seed's margin is positive, ``"on average"`` if their mean is, else ``"FAILS"``."""
    m = check_finite_array(np.clip(margin, -1e300, 1e300), name="margin", ndim=1)
    if m.size == 0:
        raise ValueError("margin must hold at least one seed")
    if np.all(m > 0):
        return "holds"
    return "on average" if m.mean() > 0 else "FAILS"


def bootstrap_margin(claim: Claim, runs: dict, *, n_seeds: int = CHAPTER_SEEDS, n_resamples: int = 2000,
                     seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    r"""The ``level`` percentile interval of the claim's mean margin over the seeds when the test sequences are
    drawn again: ``n_resamples`` resamples of the sequences with replacement, the same resample for every seed
    and both arms (they were scored on the same sequences), from ``numpy.random.default_rng(seed)``. A claim
    about a number (``than`` a float) resamples one arm. Returns ``(low, high)``; ``(nan, nan)`` for a claim
    whose metric is not a mean over test sequences (steps to a training-loss threshold)."""
    if not isinstance(claim, Claim):
        raise ValueError(f"claim must be a pe_lib.trained.robustness.Claim, got {type(claim).__name__}")
    n_resamples = check_positive_int(n_resamples, name="n_resamples")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    if claim.metric in ("steps to 0.1", "accuracy at the ends"):
        return (math.nan, math.nan)
    a = _per_sequence(runs[claim.task][claim.arm], claim.metric)[:n_seeds]  # (seeds, sequences)
    b = (_per_sequence(runs[claim.task][claim.than], claim.metric)[:n_seeds]
         if isinstance(claim.than, str) else np.full_like(a, float(claim.than)))
    diff = (a - b) if claim.higher else (b - a)  # per seed and sequence
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, diff.shape[1], size=(n_resamples, diff.shape[1]))  # (resamples, sequences)
    means = diff[:, picks].mean(axis=(0, 2))  # (resamples,): mean over seeds and the resampled sequences
    low, high = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)


def interval_verdict(low: float, high: float) -> str:
    """``"holds"`` if the interval lies above 0, ``"FAILS"`` below, ``"within noise"`` if it contains 0,
    ``"n/a"`` for no interval (NaN)."""
    if math.isnan(low) or math.isnan(high):
        return "n/a"
    if low > 0:
        return "holds"
    return "FAILS" if high < 0 else "within noise"


def verdicts(claims, results: dict) -> dict:
    """Every claim re-tested under every factor of :data:`FACTORS` in ``results`` (of
    :func:`pe_lib.trained.sweeps.robustness_sweep`):
    ``{claim.text: {factor: verdict}}`` (a variant missing from ``results`` is left out). "chapter",
    the variants and "steps x2" use the first :data:`CHAPTER_SEEDS` seeds; "seeds 0-5" all of them;
    "bootstrap" resamples the test sequences of the chapter's setting (:func:`bootstrap_margin` with
    :data:`BOOTSTRAP`)."""
    runs = results["runs"]
    out = {}
    for claim in claims:
        row = {"chapter": seed_verdict(margins(claim, runs["base"], CHAPTER_SEEDS))}
        for name in FACTORS[1:4]:
            if name in runs and claim.arm in runs[name].get(claim.task, {}):
                row[name] = seed_verdict(margins(claim, runs[name], CHAPTER_SEEDS))
        row["seeds 0-5"] = seed_verdict(margins(claim, runs["base"]))
        row["bootstrap"] = interval_verdict(*bootstrap_margin(claim, runs["base"], **BOOTSTRAP))
        out[claim.text] = row
    return out


def failing_factors(row: dict) -> list[str]:
    """The factors of one claim's verdicts (a row of :func:`verdicts`) under which it did not hold in every
    seed or beyond the sampling error: what the claim's sentence has to state as its conditions."""
    return [factor for factor, verdict in row.items() if verdict not in ("holds", "n/a")]


def verdict_table(table: dict, *, width: int = 12) -> str:
    """:func:`verdicts` as text: a header of factors, then per claim its sentence on one line, its verdict per
    factor on the next and, if it did not hold under every factor, a third line naming those factors
    (:func:`failing_factors`). Columns ``width`` characters wide."""
    factors = list(dict.fromkeys(f for row in table.values() for f in row))
    lines = ["".join(f"{f:>{width}}" for f in factors)]
    for text, row in table.items():
        lines.append(text)
        lines.append("".join(f"{row.get(f, '-'):>{width}}" for f in factors))
        failing = failing_factors(row)
        if failing:
            lines.append(f"{'':>{width}}depends on: " + ", ".join(failing))
    return "\n".join(lines)


def _claims(*rows) -> tuple[Claim, ...]:
    return tuple(Claim(*row) for row in rows)


# the headline sentences of chapter 14 (lookback, reverse at the training length) and of chapter 15 (lookback
# beyond it), each as the comparison that decides it; accuracies in [0, 1], losses in nats
CHAPTER_14_CLAIMS = _claims(
    ("sinusoidal solves lookback (>= 99%)", "lookback", "accuracy 1x", "sinusoidal", 0.99),
    ("learned solves lookback (>= 99%)", "lookback", "accuracy 1x", "learned", 0.99),
    ("sinusoidal solves reverse (>= 99%)", "reverse", "accuracy 1x", "sinusoidal", 0.99),
    ("learned solves reverse (>= 99%)", "reverse", "accuracy 1x", "learned", 0.99),
    ("lookback: learned reaches loss 0.1 in fewer steps than sinusoidal", "lookback", "steps to 0.1", "learned",
     "sinusoidal", False),
    ("reverse: learned reaches loss 0.1 in fewer steps than sinusoidal", "reverse", "steps to 0.1", "learned",
     "sinusoidal", False),
    ("lookback: so does the variance-matched learned table", "lookback", "steps to 0.1",
     "learned, variance-matched", "sinusoidal", False),
    ("reverse: so does the variance-matched learned table", "reverse", "steps to 0.1", "learned, variance-matched",
     "sinusoidal", False),
    ("lookback: learned ends at a lower test loss than sinusoidal", "lookback", "test loss", "learned",
     "sinusoidal", False),
    ("reverse: learned ends at a lower test loss than sinusoidal", "reverse", "test loss", "learned", "sinusoidal",
     False),
    ("lookback: RoPE reaches loss 0.1 first (before learned)", "lookback", "steps to 0.1", "rope", "learned",
     False),
    ("RoPE fails reverse (< 50%)", "reverse", "accuracy 1x", "rope", 0.5, False),
    ("T5 fails reverse (< 50%)", "reverse", "accuracy 1x", "t5", 0.5, False),
    ("reverse: RoPE gets the two end positions right more often than T5", "reverse", "accuracy at the ends",
     "rope", "t5"),
)
CHAPTER_15_CLAIMS = _claims(
    ("sinusoidal falls below 80% at 2x", "lookback", "accuracy 2x", "sinusoidal", 0.8, False),
    ("RoPE keeps >= 95% at 2x", "lookback", "accuracy 2x", "rope", 0.95),
    ("RoPE is ahead of T5 at 2x", "lookback", "accuracy 2x", "rope", "t5"),
    ("T5 is ahead of RoPE at 4x", "lookback", "accuracy 4x", "t5", "rope"),
    ("T5 is ahead of sinusoidal at 4x", "lookback", "accuracy 4x", "t5", "sinusoidal"),
    ("RoPE is ahead of sinusoidal at 4x", "lookback", "accuracy 4x", "rope", "sinusoidal"),
)


# ---- chapter 16: findings about how the trained models use position (pe_lib.trained.mechanisms) ----------

@dataclasses.dataclass(frozen=True)
class Finding:
    """One sentence of chapter 16 as a comparison: quantity ``quantity`` (of
    :func:`pe_lib.trained.mechanisms.measure`) of model ``model``
    is above (``higher=True``) or below ``than``: another model's value in the same seed, or a number."""

    text: str
    model: str
    quantity: str
    than: str | float
    higher: bool = True

    def __post_init__(self):
        check_choice(self.model, tuple(MODELS), name="model")
        if isinstance(self.than, str):
            check_choice(self.than, tuple(MODELS), name="than")
        elif isinstance(self.than, bool) or not isinstance(self.than, (int, float)) or not math.isfinite(self.than):
            raise ValueError(f"than must be a model of {tuple(MODELS)} or a finite number, got {self.than!r}")


def finding_margins(finding: Finding, runs: dict, n_seeds: int | None = None) -> np.ndarray:
    r"""Per seed, by how much ``finding`` holds in ``runs`` (``runs[model][quantity]``, one entry of a sweep's
    ``"runs"``): :math:`\pm(v - v_\text{than})`, positive where it holds; the first ``n_seeds`` seeds (all by
    default). Returns ``(seeds,)`` floats; empty if a model or quantity is missing (not measured there)."""
    if not isinstance(finding, Finding):
        raise ValueError(f"finding must be a pe_lib.trained.robustness.Finding, got {type(finding).__name__}")
    a = runs.get(finding.model, {}).get(finding.quantity)
    if a is None:
        return np.array([])
    a = np.asarray(a, dtype=float)
    if isinstance(finding.than, str):
        b = runs.get(finding.than, {}).get(finding.quantity)
        if b is None:
            return np.array([])
        b = np.asarray(b, dtype=float)
    else:
        b = np.full_like(a, float(finding.than))
    diff = (a - b)[:n_seeds]
    return diff if finding.higher else -diff


def finding_verdicts(findings, results: dict) -> dict:
    """Every finding re-tested under every factor of :data:`FACTORS` in ``results`` (of
    :func:`pe_lib.trained.mechanisms.mechanism_sweep`): ``{finding.text: {factor: verdict}}`` by
    :func:`seed_verdict`. "chapter", the variants and "steps x2" use the first
    :data:`pe_lib.trained.mechanisms.CHAPTER_SEEDS` seeds, "seeds 1-6" all; "other draws" the chapter's seeds
    on every other draw
    of the sequences, all draws' margins together. A factor where the quantity was not measured is left out."""
    runs = results["runs"]
    out = {}
    for finding in findings:
        row = {}
        for factor in MECHANISM_FACTORS:
            if factor == "chapter":
                m = finding_margins(finding, runs["base"], MECHANISM_SEEDS)
            elif factor == "seeds 1-6":
                m = finding_margins(finding, runs["base"])
            elif factor == "other draws":
                parts = [finding_margins(finding, runs[name], MECHANISM_SEEDS) for name in runs
                         if name.startswith("draw ")]
                m = np.concatenate(parts) if parts else np.array([])
            else:
                m = finding_margins(finding, runs[factor], MECHANISM_SEEDS) if factor in runs else np.array([])
            if m.size:
                row[factor] = seed_verdict(m)
        out[finding.text] = row
    return out


def mechanism_values(results: dict, run: str, model: str, quantity: str) -> np.ndarray:
    """The stored per-seed values of ``quantity`` of ``model`` in ``run`` of ``results`` (a chapter prints them)."""
    return np.asarray(results["runs"][run][model][quantity], dtype=float)


# the headline findings of chapter 16's summary, each as the comparison that decides it
CHAPTER_16_FINDINGS = tuple(Finding(*row) for row in (
    ("sinusoidal: a head puts > 0.5 on the key k back", "sinusoidal", "weight on k", 0.5),
    ("learned: a head puts > 0.5 on the key k back", "learned", "weight on k", 0.5),
    ("RoPE: a head puts > 0.5 on the key k back", "RoPE", "weight on k", 0.5),
    ("sinusoidal: position-position term > 0.5 of block 1", "sinusoidal", "position-position share", 0.5),
    ("sinusoidal: commuting share > 0.3 (random: 1/d)", "sinusoidal", "commuting share", 0.3),
    ("learned: commuting share stays < 0.1", "learned", "commuting share", 0.1, False),
    ("sinusoidal: weight on k beyond L < 0.5", "sinusoidal", "weight on k beyond L", 0.5, False),
    ("RoPE: weight on k beyond L > 0.5", "RoPE", "weight on k beyond L", 0.5),
    ("RoPE ahead of sinusoidal at 2L", "RoPE", "accuracy 2x", "sinusoidal"),
    ("learned table moves < 0.5 of its size", "learned", "table change", 0.5, False),
    ("learned table not smooth (neighbour cosine < 0.2)", "learned", "neighbour cosine", 0.2, False),
    ("classifier > 50% after block 1: sinusoidal", "sinusoidal", "classifier block 1", 0.5),
    ("classifier > 50% after block 1: learned", "learned", "classifier block 1", 0.5),
    ("classifier > 50% after block 1: learned, reverse", "learned, reverse", "classifier block 1", 0.5),
    ("classifier > 50% after block 2: learned, reverse", "learned, reverse", "classifier block 2", 0.5),
    ("RoPE: classifier < 3/L after block 1", "RoPE", "classifier block 1", 3 / 32, False),
    ("RoPE: classifier < 3/L after block 2", "RoPE", "classifier block 2", 3 / 32, False),
    ("none: block 1 attends uniformly (entropy > 0.99)", "none", "entropy ratio", 0.99),
    ("none: scalar probe > 0.5 after block 1", "none", "scalar probe block 1", 0.5),
    ("none: block 1 made uniform, probe still > 0.5", "none", "uniform scalar probe", 0.5),
    ("none: block 1 made uniform keeps > half the accuracy", "none", "uniform accuracy share", 0.5),
))
