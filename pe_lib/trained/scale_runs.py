r"""Chapter 20's conclusions re-tested at four times the budget and at two more widths (issue 27).

Chapter 20 trains each scheme 400 steps at :math:`d_\text{model} = 64`: 0.22 of a pass over the training
text, with the order of the schemes at :math:`L` settled only over the last quarter of training. Two
experiments, stored by ``make experiments`` (``tools/text_experiments.py``) and read by the chapter, ask what
changes with more training and with the width of the model. Both follow chapter 20's protocol and code
(:func:`pe_lib.trained.text_runs.run_all`: a learning-rate search per scheme on validation text along
:data:`~pe_lib.trained.text_runs.RATE_LADDER` until the best lies inside the rates tried, then seeds 0, 1, 2
trained at the chosen rate and scored at :math:`L, 2L, 4L, 8L`, with the loss at each position of the
:math:`8L` windows, the validation learning curve every 100 steps and the interventions):

* **Budget** (:data:`BUDGET_SETTINGS`): the six schemes of chapter 20 trained :data:`BUDGET` times as long,
  1600 steps, :math:`1600 \times 16 \times 128 = 3{,}276{,}800` characters (0.88 of the training text), the
  search run at a quarter of that budget as chapter 20's is. The learning curves say whether the order at
  :math:`L` is settled over the last half of training (:func:`settled_from`).
* **Width** (:data:`WIDTHS`): no encoding against ALiBi (Haviv et al.'s best scheme) and RoPE at
  :math:`d_\text{model} = 32` and 128, heads of width :data:`HEAD_WIDTH` = 16 (2 and 8 heads), chapter 20's
  budget; :math:`d_\text{model} = 64` is chapter 20's own runs. Haviv et al. found the gap between no encoding
  and the others shrinking with model size (:func:`nope_gaps`).

Usage::

    budget = run_budget(folder)          # text_runs.collect() of the 4x-budget runs, resumable
    widths = {d: run_width(folder_d, d) for d in WIDTHS}
    settled_from(budget["final"])        # the first checkpoint after which the order at L never changes
    order_changes(budget["final"], 800)  # the pairs whose order at L changes over the last half
"""

from __future__ import annotations

import os

import numpy as np

from .._validate import check_positive_int
from . import text_runs

BUDGET = 4  # times chapter 20's 400 steps
BUDGET_SETTINGS = text_runs.SETTINGS | {"steps": BUDGET * text_runs.SETTINGS["steps"]}
BUDGET_SEARCH_STEPS = BUDGET * text_runs.SEARCH_STEPS  # the search at a quarter of the budget, as chapter 20's
BUDGET_FINAL = tuple(cell for cell in text_runs.FINAL if not cell[2])  # the six schemes at chapter 20's widths
HEAD_WIDTH = 16  # d_k of chapter 20: RoPE with 8 frequencies at every width
WIDTHS = (32, 128)  # d_model besides chapter 20's 64
WIDTH_FINAL = (("none", "none", {}), ("alibi", "alibi", {}), ("rope", "rope", {}))


def width_settings(d_model: int) -> dict:
    """Chapter 20's settings at width ``d_model`` with heads of :data:`HEAD_WIDTH` (``n_heads = d_model / 16``)."""
    d_model = check_positive_int(d_model, name="d_model")
    if d_model % HEAD_WIDTH:
        raise ValueError(f"d_model must be a multiple of the head width {HEAD_WIDTH}, got {d_model}")
    return text_runs.SETTINGS | {"d_model": d_model, "n_heads": d_model // HEAD_WIDTH}


def run_budget(folder, *, say=print) -> dict:
    """The budget experiment into ``folder``, configuration by configuration (stored as each finishes, skipped
    when stored and current): :func:`pe_lib.trained.text_runs.run_all` at :data:`BUDGET_SETTINGS`."""
    return text_runs.run_all(folder, final=BUDGET_FINAL, search_steps=BUDGET_SEARCH_STEPS, say=say,
                             **BUDGET_SETTINGS)


def run_width(folder, d_model: int, *, say=print) -> dict:
    """The width experiment at ``d_model`` into ``folder``: :data:`WIDTH_FINAL` at :func:`width_settings`."""
    return text_runs.run_all(folder, final=WIDTH_FINAL, say=say, **width_settings(d_model))


def width_folder(root, d_model: int) -> str:
    """Where the runs at width ``d_model`` are stored inside ``root``."""
    return os.path.join(root, f"d_model_{check_positive_int(d_model, name='d_model')}")


def orders(final: dict) -> dict:
    """``{steps: names}``: the final configurations of a :func:`~pe_lib.trained.text_runs.collect` ordered by
    their validation bits per character at :math:`L` (mean over seeds, best first) at every checkpoint of their
    learning curves (the checkpoints all of them share)."""
    if not final:
        raise ValueError("final is empty: no stored configuration to order")
    steps = set.intersection(*(set(cell["curve"]) for cell in final.values()))
    return {int(n): sorted(final, key=lambda name: float(np.mean(final[name]["curve"][n])))
            for n in sorted(steps, key=int)}


def settled_from(final: dict) -> int:
    """The first checkpoint from which the order of :func:`orders` stays what it is at the end of training."""
    by_steps = orders(final)
    checkpoints = sorted(by_steps)
    last = by_steps[checkpoints[-1]]
    first = checkpoints[-1]
    for n in reversed(checkpoints):
        if by_steps[n] != last:
            break
        first = n
    return first


def order_changes(final: dict, since: int) -> list[tuple[str, str]]:
    """The pairs ``(a, b)``, ``a`` ahead of ``b`` at the end of training, whose order is reversed at some checkpoint
    of :func:`orders` from ``since`` on; in the order of the end (an empty list: every pair kept its order)."""
    since = check_positive_int(since, name="since")
    by_steps = orders(final)
    end = by_steps[max(by_steps)]
    rank = {name: k for k, name in enumerate(end)}
    changed = set()
    for n, order in by_steps.items():
        if n >= since:
            at = {name: k for k, name in enumerate(order)}
            changed |= {(a, b) for a in end for b in end if rank[a] < rank[b] and at[a] > at[b]}
    return sorted(changed, key=lambda pair: (rank[pair[0]], rank[pair[1]]))


def nope_gaps(final: dict, *, against: str = "alibi") -> np.ndarray:
    """Bits per character at :math:`L` of no encoding minus those of ``against``, seed by seed ``(seeds,)``."""
    for name in ("none", against):
        if name not in final:
            raise ValueError(f"no stored configuration {name!r}; stored: {sorted(final)}")
    return np.array([row[0] for row in final["none"]["bpc"]]) - np.array([row[0] for row in final[against]["bpc"]])
