r"""The runs behind chapter 21's trained evidence: NoPE layers, windows and p-RoPE on text, and DroPE.

Two experiments, stored by ``make experiments`` (``tools/layer_experiments.py``) in
``notebooks/results/21_layers/`` and read back by the chapter:

* **Schemes that differ from layer to layer** (:data:`FINAL`), trained on the text of chapter 20 with its
  protocol and code (:func:`pe_lib.trained.text_runs.run_all`: a learning-rate search per scheme on
  validation text, best inside the grid, then seeds 0, 1, 2, scored at :math:`L, 2L, 4L, 8L` with the loss at
  each position of the :math:`8L` windows), at :data:`SETTINGS` (chapter 20's, with 4 layers so that every
  fourth layer can go without positions): RoPE in every layer, no encoding in any, NoPE every fourth layer
  (SmolLM3), RoPE only in sliding-window layers of :math:`W = 32` with every fourth layer global and NoPE
  (Command R7B), the same with chunks of 32 (Llama 4's iRoPE, without its temperature), and p-RoPE (the
  fastest quarter of each head's pairs rotating, in every layer). The schemes are
  :data:`pe_lib.trained.transformer.LAYER_CONFIGS`, read by :func:`pe_lib.layer_positions`.
* **DroPE at laptop scale** (:func:`drope_cell`): the RoPE models of the first experiment (trained again from
  the same seeds: the same weights) with RoPE removed, scored as they are and after a recalibration of
  :data:`RECALIBRATION_STEPS` more steps without RoPE; against Position Interpolation and YaRN with scale
  :math:`s = f` applied to the same models at :math:`fL`, without and with a recalibration of the same steps
  at :math:`L` with the scaled RoPE. Each recalibration starts Adam afresh, draws training text the models have
  not yet trained on (data seeds :math:`1000 + s`) and trains at the rate of lowest validation loss at :math:`L`
  among :data:`RECALIBRATION_RATES` (extended past a corner along chapter 20's ladder); DroPE is run with
  :data:`LONG_RECALIBRATION` times the steps too.

Usage::

    results = run_all(folder)            # the first experiment, resumable (text_runs.run_all)
    drope = drope_cell(rate)             # the second: a dict of bits per character per arm
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np

from .._validate import check_positive_int
from . import text_runs
from .language_model import text_loss
from .text_interventions import window_bits
from .training import _check_settings, _config, _train

SETTINGS = text_runs.SETTINGS | {"n_layers": 4}
FINAL = (("rope", "rope", {}), ("none", "none", {}), ("rope+nope", "rope+nope", {}),
         ("swa-rope+nope", "swa-rope+nope", {}), ("chunked-rope+nope", "chunked-rope+nope", {}),
         ("p-rope", "p-rope", {}))
RECALIBRATION_STEPS = 40  # a tenth of the 400 training steps (DroPE's paper: under 1% of pretraining)
LONG_RECALIBRATION = 4  # DroPE also with four times as many recalibration steps: how much the budget matters
RECALIBRATION_RATES = (1e-3, 3e-3, 1e-2)  # each recalibration searches its rate, as chapter 20's search does
# chapter 20's ladder reaches down to 3e-4 only; a recalibration of a trained model may want smaller steps
RECALIBRATION_LADDER = (1e-5, 3e-5, 1e-4, *text_runs.RATE_LADDER)


def _ladder_choice(scores: dict) -> tuple[float, float | None]:
    """:func:`pe_lib.trained.text_runs.search_choice` along :data:`RECALIBRATION_LADDER`: ``(best rate, next
    rate to try)``, the next one past the best when it lies at a corner of the rates tried, else ``None``."""
    tried, best = sorted(scores), min(scores, key=scores.get)
    k = RECALIBRATION_LADDER.index(best)
    if best == tried[0] and k > 0:
        return best, RECALIBRATION_LADDER[k - 1]
    if best == tried[-1] and k + 1 < len(RECALIBRATION_LADDER):
        return best, RECALIBRATION_LADDER[k + 1]
    return best, None
DATA_SEED_OFFSET = 1000  # recalibration draws the text of seed 1000 + s: batches the models have not seen
SCALINGS = {"PI": lambda s, L: {"rope_type": "linear", "factor": float(s)},
            "YaRN": lambda s, L: {"rope_type": "yarn", "factor": float(s), "original_max_position_embeddings": L}}
# the code these results depend on: text_runs' files and this one
CODE_FILES = (*text_runs.CODE_FILES, "trained/layer_runs.py")


def code_version() -> str:
    """:func:`pe_lib.trained.text_runs.code_version` of :data:`CODE_FILES`."""
    return text_runs.code_version(CODE_FILES)


def run_all(folder, *, say=print, **settings) -> dict:
    """The first experiment (:data:`FINAL` at :data:`SETTINGS`), run or skipped configuration by configuration
    by :func:`pe_lib.trained.text_runs.run_all` into ``folder``; returns its
    :func:`~pe_lib.trained.text_runs.collect`."""
    return text_runs.run_all(folder, final=FINAL, say=say, **(SETTINGS | settings))


def _recalibrated(models, config, steps: int):
    """``models`` trained ``steps`` more steps under ``config`` (its encoding and rope_scaling), Adam started
    afresh, on the text of data seeds :data:`DATA_SEED_OFFSET` + seed."""
    seeds = tuple(DATA_SEED_OFFSET + m.config.seed for m in models)
    start = {DATA_SEED_OFFSET + m.config.seed: m.params for m in models}
    again = _train(dataclasses.replace(config, steps=steps), seeds, False, initial=start)
    return [dataclasses.replace(m, config=dataclasses.replace(m.config, encoding=config.encoding,
                                                              rope_scaling=config.rope_scaling),
                                params=a.params) for m, a in zip(models, again, strict=True)]


def _as(models, **changes):
    """The same weights read under another position scheme (a changed config, nothing trained)."""
    return [dataclasses.replace(m, config=dataclasses.replace(m.config, **changes)) for m in models]


def drope_cell(rate: float, *, seeds=(0, 1, 2), factors=text_runs.FACTORS, n_characters: int = text_runs.N_CHARACTERS,
               recalibration_steps: int = RECALIBRATION_STEPS, say=None, **settings) -> dict:
    r"""DroPE, PI and YaRN on the RoPE models trained at ``rate`` with :data:`SETTINGS` (see the module
    docstring). Returns a JSON-ready dict: ``lengths``, ``settings``, ``seeds``, ``learning_rate``,
    ``recalibration_steps``, ``code_version``, ``recalibration_search[arm]`` (``{rate: validation bpc at L}``,
    mean of the seeds), ``recalibration_rates[arm]`` (the rate chosen) and ``bpc[arm]``: seeds x lengths bits
    per character on the first ``n_characters`` held-out characters, for the arms ``"RoPE"``, ``"RoPE removed"``,
    ``"DroPE"`` (removed and recalibrated), the same with :data:`LONG_RECALIBRATION` times the steps,
    and ``"PI"``, ``"YaRN"``, ``"PI + recalibration"``, ``"YaRN + recalibration"``, whose
    entry at :math:`fL` uses the scale :math:`s = f` (at :math:`L`: plain RoPE). ``say``: a function that
    receives a progress line after each arm (``None``: silent)."""
    import time

    start = time.time()

    def progress(arm):
        if say is not None:
            say(f"DroPE, PI and YaRN: {arm} done | elapsed {time.time() - start:.0f} s")

    settings = _check_settings(SETTINGS | settings | {"learning_rate": rate}, "drope_cell")
    recalibration_steps = check_positive_int(recalibration_steps, name="recalibration_steps")
    seeds = tuple(seeds)
    L = settings["seq_len"]
    factors = [check_positive_int(f, name="factor") for f in factors]
    config = _config("text", "rope", seed=seeds[0], **settings)
    rope = _train(config, seeds, False)
    progress("RoPE models trained")
    validation = text_runs.validation_text()[: text_runs.CURVE_CHARACTERS + 1]
    searches, chosen = {}, {}

    def recalibrated(arm, changes, steps=recalibration_steps):
        """The models recalibrated under ``changes`` at the rate of lowest validation loss at L (the search of
        chapter 20: the first rates, then one past a corner at a time, along :data:`RECALIBRATION_LADDER`)."""
        scores, found, queue = {}, {}, list(RECALIBRATION_RATES)
        while queue:
            r = queue.pop(0)
            found[r] = _recalibrated(rope, dataclasses.replace(config, learning_rate=r, **changes), steps)
            scores[r] = float(np.mean([text_loss(m, L, text=validation) for m in found[r]]))
            if not queue:
                more = _ladder_choice(scores)[1]
                queue += [] if more is None else [more]
        best = _ladder_choice(scores)[0]
        searches[arm], chosen[arm] = {f"{r:g}": v for r, v in sorted(scores.items())}, best
        progress(f"{arm} (recalibration rate {best:g})")
        return found[best]

    def bpc(models, n):
        return [float(window_bits(m, n, n_characters=n_characters).mean()) for m in models]

    def column(arms_at):  # seeds x lengths from {f: models}
        return np.array([bpc(arms_at(f), f * L) for f in factors]).T.tolist()

    removed = _as(rope, encoding="none")
    drope = recalibrated("DroPE", {"encoding": "none"})
    longer = recalibrated(f"DroPE, {LONG_RECALIBRATION * recalibration_steps} steps", {"encoding": "none"},
                          LONG_RECALIBRATION * recalibration_steps)
    out = {"lengths": [f * L for f in factors], "settings": {k: settings[k] for k in SETTINGS}, "seeds": list(seeds),
           "learning_rate": rate, "recalibration_steps": recalibration_steps, "n_characters": n_characters,
           "code_version": code_version(),
           "bpc": {"RoPE": column(lambda f: rope), "RoPE removed": column(lambda f: removed),
                   "DroPE": column(lambda f: drope),
                   f"DroPE, {LONG_RECALIBRATION * recalibration_steps} steps": column(lambda f: longer)}}
    for name, scaling in SCALINGS.items():
        scaled, tuned = {1: rope}, {1: rope}
        for f in factors:
            if f == 1:
                continue
            items = tuple(sorted(scaling(f, L).items()))
            scaled[f] = _as(rope, rope_scaling=items)
            tuned[f] = recalibrated(f"{name} + recalibration, s = {f}", {"rope_scaling": items})
        out["bpc"][name] = column(scaled.__getitem__)  # {f: models}: the arms at fL
        out["bpc"][f"{name} + recalibration"] = column(tuned.__getitem__)
        progress(name)
    out["recalibration_search"], out["recalibration_rates"] = searches, chosen
    return out


def drope_file(folder) -> str:
    """Where :func:`run_drope` stores the DroPE results: a folder of its own inside ``folder``, so that
    :func:`pe_lib.trained.text_runs.collect` of ``folder`` reads only the first experiment."""
    return os.path.join(folder, "drope", "drope.json")


def run_drope(folder, *, say=print) -> dict:
    """:func:`drope_cell` at the learning rate the RoPE search of the first experiment chose (stored in
    ``folder``), stored in :func:`drope_file`; skipped when stored with the current code and that rate."""
    rate = text_runs.collect(folder)["learning_rates"]["rope"]
    path = drope_file(folder)
    if os.path.exists(path):
        stored = text_runs.load_results(path)
        if stored.get("code_version") == code_version() and stored.get("learning_rate") == rate:
            say(f"stored and current: {os.path.basename(path)}")
            return stored
    out = drope_cell(rate, say=say)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    text_runs.save_results(out, path)
    say(f"done DroPE, PI and YaRN (rate {rate:g})")
    return out
