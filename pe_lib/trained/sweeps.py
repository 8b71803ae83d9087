r"""The runs behind the robustness check of chapters 14 and 15 (:mod:`pe_lib.trained.robustness`), stored.

:func:`robustness_sweep` trains the chapters' models at their shared setting (:data:`BASE`: four heads of
width 8, 500 steps) and again with one choice changed at a time (:data:`VARIANTS`: one head of width 32, eight
heads of width 8; the same runs read after twice the steps), every one with seeds 0-5, and scores them on the
test sequences, keeping per sequence what a bootstrap needs. :func:`wider_search` searches the schemes that
fail in chapter 14 on a grid wider than the chapter's. Both take minutes, more than a chapter's Run All may:
``make experiments`` stores them (:func:`save_results`, with :func:`code_version`) in ``notebooks/results/``
and the chapters read them; ``tests/trained/test_sweeps.py`` trains one configuration of each again.
"""

from __future__ import annotations

import json

import numpy as np

from .._validate import check_finite_array
from .runs import steps_to_loss
from .training import EVAL_SEED, _evaluate, train_grid

TASKS = ("lookback", "reverse")
ARMS = {"lookback": ("sinusoidal", "learned", "learned, variance-matched", "rope", "t5"),
        "reverse": ("sinusoidal", "learned", "learned, variance-matched", "rope", "t5")}
# every model of chapters 14 and 15, at the shared setting those chapters report first
BASE = dict(seq_len=16, d_model=32, n_layers=2, n_heads=4, batch_size=8, learning_rate=1e-2, steps=500)
SEEDS = (0, 1, 2, 3, 4, 5)  # the chapters train 0, 1, 2; 3, 4, 5 are new to them
# the architectures trained besides the chapters' 4 heads of width 8 (one factor each); "steps x2" is the same
# run as the base, read after twice the steps
VARIANTS = {"heads 1x32": dict(n_heads=1), "heads 8x8": dict(n_heads=8, d_model=64)}
THRESHOLD, WINDOW = 0.1, 20  # steps to a 20-step mean training loss below 0.1 (chapter 14)
N_SEQUENCES = 256  # test sequences, as task_accuracy's default
# the code the stored results depend on: a change in any of these files makes them stale
CODE_FILES = ("trained/sweeps.py", "trained/runs.py", "trained/training.py", "trained/transformer.py",
              "trained/tasks.py", "trained/protocol.py", "encodings/sinusoidal.py", "encodings/frequencies.py",
              "encodings/t5.py", "encodings/alibi.py",
              # the kernels the runs use: oneDNN at AVX2 and two XLA threads, pinned at import (issue 32)
              "trained/__init__.py", "book/machine.py",
              # what the model code and the losses now import (chapter 21's per-layer schemes, rope_scaling)
              "trained/language_model.py", "modern/layer_types.py", "modern/rope_scaling.py")


def variance_matched_std(table) -> float:
    r"""The std :math:`s` of a table drawn :math:`\mathcal N(0, s^2)` whose expected variance across positions,
    summed over the dimensions, equals that of ``table`` (``(L, d)``, e.g. the sinusoids at the training length):
    :math:`s^2 = \sum_k \operatorname{Var}_{pos}(T_{pos,k}) \,/\, (d\,(L-1)/L)` (population variances, whose
    expectation for a random table is :math:`s^2 (L-1)/L` per dimension). Returns a float >= 0."""
    t = check_finite_array(table, name="table", ndim=2, shape_hint="(L, d)")
    if t.shape[0] < 2:
        raise ValueError(f"table needs at least 2 positions to vary across, got shape {t.shape}")
    n, d = t.shape
    return float(np.sqrt(t.var(axis=0).sum() / (d * (n - 1) / n)))


def _score(model, seq_len: int, per_sequence: bool) -> dict:
    """On the test sequences: the number of scored targets right, the number of sequences right at each
    position and the mean loss; with ``per_sequence`` also per test sequence its targets right and its loss
    (5 digits), which the bootstrap resamples."""
    logits, targets, counts = _evaluate(model, seq_len, N_SEQUENCES, EVAL_SEED, None)
    z = logits[:, counts].astype(np.float64)  # (B, scored, V)
    top = z.max(axis=-1, keepdims=True)
    log_p = z - top - np.log(np.exp(z - top).sum(axis=-1, keepdims=True))
    right = z.argmax(axis=-1) == targets  # (B, scored)
    loss = -np.take_along_axis(log_p, targets[..., None], axis=-1)[..., 0].mean(axis=-1)  # (B,)
    out = {"right": int(right.sum()), "targets": int(right.size), "loss": float(loss.mean()),
           "by_position": right.sum(axis=0).tolist(), "sequences": int(right.shape[0])}
    if per_sequence:
        out["right_per_sequence"] = right.sum(axis=-1).tolist()
        out["loss_per_sequence"] = [float(f"{x:.5g}") for x in loss]
    return out


def _measure(task: str, arm: str, models, steps: int, per_sequence: bool = False) -> dict:
    """Per-seed scores of one arm's models (:func:`_score`) at 1x, 2x, 4x the training length (lookback; a
    learned table only at 1x) and the steps its training losses took to :data:`THRESHOLD`."""
    seq_len = models[0].seq_len
    factors = (1, 2, 4) if task == "lookback" and not arm.startswith("learned") else (1,)
    losses = np.array([m.losses[:steps] for m in models])
    return {"scores": {f"{f}x": [_score(m, f * seq_len, per_sequence) for m in models] for f in factors},
            "steps to 0.1": steps_to_loss(losses, THRESHOLD, window=WINDOW).tolist()}


def _train_arm(task, arm, settings, seeds, progress):
    encoding, extra = "learned", {}
    if arm == "learned, variance-matched":
        from ..encodings.sinusoidal import sinusoidal

        extra = {"learned_init_std": variance_matched_std(sinusoidal(settings["seq_len"], settings["d_model"]))}
    elif arm != "learned":
        encoding = arm
    fixed = {k: v for k, v in settings.items() if k not in ("learning_rate", "steps")}
    return train_grid(task, encoding, seeds=seeds, learning_rates=(settings["learning_rate"],),
                      steps=(settings["steps"], 2 * settings["steps"]), progress=progress, **(fixed | extra))


def robustness_sweep(*, tasks=TASKS, arms=None, variants=None, seeds=SEEDS, progress: bool | None = None,
                     log=None, **settings) -> dict:
    """Train every arm of every task at the base setting (:data:`BASE` updated by ``settings``) and at each of
    ``variants`` (default :data:`VARIANTS`), each with every seed in one vmapped run kept after the base
    number of steps and after twice it, and score the models (:func:`_measure`).

    Returns a JSON-ready dict: ``settings``, ``seeds``, ``variants``, ``code_version`` and
    ``runs[name][task][arm]`` for ``name`` in ``"base"``, ``"steps x2"`` and the variants: ``scores[f]``
    (per seed: right targets and loss per test sequence, fraction right per position, at ``f`` times the
    training length) and ``steps to 0.1`` (per seed; -1: never). ``log``: called with a line of text after
    each arm (progress outside a notebook), if given.
    """
    base = BASE | settings
    variants = VARIANTS if variants is None else variants
    arms = ARMS if arms is None else arms
    seeds = tuple(seeds)
    out = {"settings": base, "seeds": list(seeds), "variants": variants, "code_version": code_version(),
           "runs": {}}
    for name, change in ({"base": {}} | dict(variants)).items():
        config = base | change
        for task in tasks:
            for arm in arms[task]:
                grid = _train_arm(task, arm, config, seeds, progress)
                lr, n = config["learning_rate"], config["steps"]
                out["runs"].setdefault(name, {}).setdefault(task, {})[arm] = _measure(task, arm, grid[lr, n], n,
                                                                                     per_sequence=name == "base")
                if log is not None:
                    log(f"{name}: {task} {arm} done")
                if name == "base":
                    out["runs"].setdefault("steps x2", {}).setdefault(task, {})[arm] = _measure(
                        task, arm, grid[lr, 2 * n], 2 * n)
    return out


# the arms that fail in chapter 14, searched on a grid wider than the chapter's (learning rates 0.003, 0.01;
# 500, 1000 steps; ALiBi 4 or 8 heads), to see whether their best setting lies inside it; the steps run to
# 16 times the chapter's 500
WIDER_ARMS = (("reverse", "rope", 4), ("reverse", "t5", 4), ("lookback", "alibi", 8), ("lookback", "alibi", 16))
WIDER_GRID = dict(learning_rates=(1e-3, 3e-3, 1e-2, 3e-2), steps=(500, 1000, 2000, 4000, 8000))


def wider_search(arms=WIDER_ARMS, *, seeds=(0, 1, 2), progress: bool | None = None, log=None, **grid) -> dict:
    """Each ``(task, encoding, n_heads)`` of ``arms`` trained on every setting of ``grid`` (default
    :data:`WIDER_GRID`; the other settings :data:`BASE`) with ``seeds``, one vmapped run per learning rate
    (so that one rate can be trained again on its own and give the same models); every setting scored by
    its loss on the validation sequences (:func:`pe_lib.validation_losses`) and by its test accuracy at the
    training length. Returns ``{"task encoding heads": {"lr steps": {"validation": mean loss over the seeds,
    "validation per seed": losses, "test": per-seed accuracies}}}``; ``log`` as in :func:`robustness_sweep`."""
    from .protocol import validation_losses
    from .training import task_accuracy

    grid = WIDER_GRID | grid
    fixed = {k: v for k, v in BASE.items() if k not in ("learning_rate", "steps", "n_heads")}
    out = {}
    for task, encoding, heads in arms:
        scores = {}
        for lr in grid["learning_rates"]:
            models = train_grid(task, encoding, seeds=tuple(seeds), progress=progress, n_heads=heads,
                                learning_rates=(lr,), steps=grid["steps"], **fixed)
            val = validation_losses(models, BASE["seq_len"])
            scores |= {f"{lr:g} {n}": {"validation": float(val[lr, n].mean()),
                                       "validation per seed": val[lr, n].tolist(),
                                       "test": [task_accuracy(m, BASE["seq_len"]) for m in ms]}
                       for (lr, n), ms in models.items()}
            if log is not None:
                log(f"wider search: {task} {encoding} {heads} heads, learning rate {lr:g} done")
        out[f"{task} {encoding} {heads}"] = scores
    return out


def save_results(results: dict, path) -> None:
    """Write ``results`` (of :func:`robustness_sweep` or :func:`wider_search`) to ``path`` as compact JSON."""
    with open(path, "w") as file:
        json.dump(results, file, sort_keys=True, separators=(",", ":"))
        file.write("\n")


def load_results(path) -> dict:
    """The results stored at ``path`` by :func:`save_results`."""
    with open(path) as file:
        return json.load(file)


def code_version() -> str:
    """The code version of :data:`CODE_FILES`: :func:`pe_lib.trained.text_runs.code_version` of these files."""
    from .text_runs import code_version as of_files

    return of_files(CODE_FILES)
