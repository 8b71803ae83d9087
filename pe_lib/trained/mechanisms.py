r"""Does a finding of chapter 16 about *how* the trained models use position survive what a referee would vary?

Chapter 16 trains five small models (two blocks of one head of width 32, sequences of :math:`L = 32`, 500 Adam
steps at rate 0.003; the model without an encoding 1000 steps on lookback one token back) with seeds 1-3 and
reads their attention, score terms, tables and residual streams. :func:`mechanism_sweep` trains them again with
one choice changed at a time (:data:`VARIANTS`: four heads of width 8, eight heads of width 8 in a model twice as
wide; the same runs read after twice the steps; seeds 1-6) and measures every quantity a headline sentence of
the chapter rests on (:func:`measure`), also on other draws of every set of sequences the chapter evaluates on
(the evaluation's own sampling error); :func:`pe_lib.trained.robustness.finding_verdicts` re-tests each finding
per factor (*holds* in every seed, *on average*, *FAILS*). ``make experiments`` stores
the sweep (:func:`pe_lib.trained.sweeps.save_results`, with :func:`code_version`) and chapter 16 reads it;
``tests/trained/test_mechanisms.py`` trains one configuration again.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_choice
from ..analysis.classifier import layer_classifier
from ..analysis.embedding import cosine_matrix
from ..analysis.probe import layer_probe
from ..analysis.relative import mass_on_offset
from .head_terms import commuting_share, head_score_terms, positional_form, term_shares
from .model_analysis import (
    attention_by_offset,
    model_with_uniform_attention,
    position_table,
    residual_stream,
    trained_attention,
)
from .tasks import task_batch
from .training import EVAL_SEED, task_accuracy, train_grid

# chapter 16's settings, its step counts and seeds (it trains 1, 2, 3; 4, 5, 6 are new to it)
SETTINGS = dict(seq_len=32, d_model=32, n_layers=2, n_heads=1, batch_size=16, learning_rate=3e-3, vocab_size=16)
SEEDS = (1, 2, 3, 4, 5, 6)
CHAPTER_SEEDS = 3
# name -> (task, encoding, offset, steps)
MODELS = {"sinusoidal": ("lookback", "sinusoidal", 3, 500), "RoPE": ("lookback", "rope", 3, 500),
          "learned": ("lookback", "learned", 3, 500), "learned, reverse": ("reverse", "learned", 3, 500),
          "none": ("lookback", "none", 1, 1000)}
VARIANTS = {"heads 4x8": dict(n_heads=4), "heads 8x8": dict(n_heads=8, d_model=64)}
DRAWS = 3  # draw 0: the chapter's sequences; draws 1, 2: other sequences, the evaluation's sampling error
FACTORS = ("chapter", "heads 4x8", "heads 8x8", "steps x2", "seeds 1-6", "other draws")
N_TRAIN = 24  # probe sequences that fit each classifier and probe; 8 more test it, as in the chapter
CODE_FILES = ("trained/mechanisms.py", "trained/training.py", "trained/transformer.py", "trained/tasks.py",
              "trained/model_analysis.py", "trained/head_terms.py", "analysis/classifier.py", "analysis/probe.py",
              "analysis/relative.py", "analysis/embedding.py", "encodings/sinusoidal.py", "encodings/frequencies.py",
              "trained/__init__.py", "book/machine.py",
              # what the model code and the losses now import (chapter 21's per-layer schemes, rope_scaling)
              "trained/language_model.py", "modern/layer_types.py", "modern/rope_scaling.py")


def _sequences(draw: int) -> dict:
    """The seeds of the sequences the chapter evaluates on (draw 0), or of other ones (draw >= 1)."""
    return {"analysis": 7 + 1000 * draw, "probe": 11 + 1000 * draw, "test": EVAL_SEED + draw}


def _mean_entropy_ratio(a) -> float:
    r"""Mean over queries :math:`m \ge 1` of the entropy of their causal weights over :math:`\ln(m+1)`;
    ``a``: ``(..., T, T)``, averaged over the leading axes after the ratio."""
    a = np.asarray(a, dtype=np.float64)
    plogp = np.where(a > 0, a * np.log(np.where(a > 0, a, 1.0)), 0.0)
    entropy = -plogp.sum(axis=-1)  # (..., T)
    return float((entropy[..., 1:] / np.log(np.arange(2, a.shape[-1] + 1))).mean())


def measure(name: str, model, draw: int = 0) -> dict:
    r"""The quantities chapter 16's findings rest on, for one trained model of :data:`MODELS` ``name``, on the
    sequences of ``draw`` (0: the chapter's). Every model: ``accuracy 1x`` (test sequences at :math:`L`) and,
    if it adds an encoding, ``classifier block 1``, ``classifier block 2`` (held-out share of 32 positions read
    by the linear classifier, :func:`pe_lib.layer_classifier`). Lookback models with an encoding:
    ``weight on k`` (the largest mean weight on the key :math:`k` back of any block and head, queries below
    :math:`L`); sinusoidal and RoPE also ``weight on k beyond L`` (that head's, queries :math:`L..2L-1` of
    sequences of :math:`2L`) and ``accuracy 2x``; sinusoidal and learned also, for the head of block 1 with
    the most weight on :math:`k`, ``position-position share`` (:func:`pe_lib.term_shares`) and ``commuting
    share`` (:func:`pe_lib.commuting_share` of its positional form); learned also ``table change``
    (:math:`\lVert P - P_0\rVert / \lVert P_0\rVert`) and ``neighbour cosine`` (mean cosine of rows
    :math:`p, p+1`). Without an encoding: ``entropy ratio`` (block 1, mean over heads and queries),
    ``scalar probe block 1`` (held-out :math:`R^2` of pos), and with block 1 made exactly uniform
    (:func:`pe_lib.trained.model_analysis.model_with_uniform_attention`) ``uniform scalar probe`` and
    ``uniform accuracy share`` ((accuracy - 1/V) over the trained model's accuracy - 1/V). Returns
    ``{quantity: float}``."""
    check_choice(name, tuple(MODELS), name="name")
    seeds = _sequences(draw)
    cfg = model.config
    L, k = cfg.seq_len, cfg.offset
    accuracy = task_accuracy(model, L, seed=seeds["test"])
    out = {"accuracy 1x": accuracy}
    probe_tokens = task_batch("reverse", 32, L, seed=seeds["probe"])[0]
    positions = np.arange(L)
    states = residual_stream(model, probe_tokens)
    if name == "none":
        attention = trained_attention(model, probe_tokens)[0]  # block 1: (sequences, heads, L, L)
        uniform = model_with_uniform_attention(model)
        chance = 1 / cfg.vocab_size
        out |= {"entropy ratio": _mean_entropy_ratio(attention),
                "scalar probe block 1": float(layer_probe(states, positions, n_train=N_TRAIN)[1]),
                "uniform scalar probe": float(layer_probe(residual_stream(uniform, probe_tokens),
                                                                 positions, n_train=N_TRAIN)[1]),
                "uniform accuracy share": (task_accuracy(uniform, L, seed=seeds["test"]) - chance)
                / (accuracy - chance)}
        return out
    readable = layer_classifier(states, positions, n_train=N_TRAIN)
    out |= {"classifier block 1": float(readable[1]), "classifier block 2": float(readable[2])}
    if model.task != "lookback":
        return out
    tokens = task_batch("lookback", 64, L, seed=seeds["analysis"])[0]
    mean_attention = trained_attention(model, tokens).mean(axis=1)  # (blocks, heads, L, L)
    on_k = np.array([[attention_by_offset(a)[k] for a in block] for block in mean_attention])  # (blocks, H)
    block, head = np.unravel_index(np.argmax(on_k), on_k.shape)
    out["weight on k"] = float(on_k[block, head])
    if name in ("sinusoidal", "RoPE"):
        long = task_batch("lookback", 64, 2 * L, seed=seeds["analysis"])[0]
        w = mass_on_offset(trained_attention(model, long).mean(axis=1)[block, head], k)  # k..2L-1
        out |= {"weight on k beyond L": float(w[L - k:].mean()),
                "accuracy 2x": task_accuracy(model, 2 * L, seed=seeds["test"])}
    if name in ("sinusoidal", "learned"):
        h = int(np.argmax(on_k[0]))  # the head of block 1 that looks k back most
        out |= {"position-position share": float(term_shares(head_score_terms(model, tokens, head=h))[3]),
                "commuting share": commuting_share(positional_form(model, head=h))}
    if name == "learned":
        p, p0 = position_table(model), position_table(model.initial())
        c = cosine_matrix(p, p)
        out |= {"table change": float(np.linalg.norm(p - p0) / np.linalg.norm(p0)),
                "neighbour cosine": float(np.diag(c, 1).mean())}
    return out


def _train(name, settings, seeds, steps, progress):
    """One model per seed of ``name`` with ``settings``, read after each number of ``steps`` (one run)."""
    task, encoding, offset, _ = MODELS[name]
    fixed = {key: value for key, value in settings.items() if key != "learning_rate"}
    return train_grid(task, encoding, seeds=tuple(seeds), learning_rates=(settings["learning_rate"],),
                      steps=tuple(steps), offset=offset, progress=progress, **fixed)


def _collect(measured: list[dict]) -> dict:
    """``[{quantity: value} per seed]`` -> ``{quantity: [value per seed]}``."""
    return {key: [m[key] for m in measured] for key in measured[0]}


def mechanism_sweep(*, models=None, variants=None, seeds=SEEDS, draws: int = DRAWS, steps: int | None = None,
                    progress: bool | None = None, log=None, **settings) -> dict:
    """Train every model of ``models`` (default all of :data:`MODELS`) at chapter 16's setting (:data:`SETTINGS`
    updated by ``settings``) with ``seeds``, kept after its steps and after twice them, and at each of
    ``variants`` (default :data:`VARIANTS`) with the first :data:`CHAPTER_SEEDS` seeds; measure each
    (:func:`measure`). Returns a JSON-ready dict: ``settings``, ``seeds``, ``variants``, ``code_version`` and
    ``runs[name][model]`` = ``{quantity: [value per seed]}`` for ``name`` in ``"base"`` (every seed, the
    chapter's sequences), ``"steps x2"``, the variants and ``"draw 1"``, ``"draw 2"``, ... (the base models
    of the first seeds on other sequences). ``steps``: every model's number of steps instead of its own in
    :data:`MODELS` (tiny runs in the tests). ``log``: called with a line of text after each model."""
    base = SETTINGS | settings
    variants = VARIANTS if variants is None else variants
    names = tuple(MODELS) if models is None else tuple(check_choice(n, tuple(MODELS), name="model") for n in models)
    seeds = tuple(seeds)
    first = seeds[:CHAPTER_SEEDS]
    out = {"settings": base, "seeds": list(seeds), "variants": variants, "code_version": code_version(), "runs": {}}
    runs = out["runs"]
    for name in names:
        n = MODELS[name][3] if steps is None else steps
        grid = _train(name, base, seeds, (n, 2 * n), progress)
        models = grid[base["learning_rate"], n]
        runs.setdefault("base", {})[name] = _collect([measure(name, m) for m in models])
        runs.setdefault("steps x2", {})[name] = _collect(
            [measure(name, m) for m in grid[base["learning_rate"], 2 * n][:CHAPTER_SEEDS]])
        for draw in range(1, draws):
            runs.setdefault(f"draw {draw}", {})[name] = _collect(
                [measure(name, m, draw) for m in models[:CHAPTER_SEEDS]])
        for variant, change in variants.items():
            other = _train(name, base | change, first, (n,), progress)[base["learning_rate"], n]
            runs.setdefault(variant, {})[name] = _collect([measure(name, m) for m in other])
        if log is not None:
            log(f"mechanisms: {name} done")
    return out


def code_version() -> str:
    """The code version of :data:`CODE_FILES`: :func:`pe_lib.trained.text_runs.code_version` of these files."""
    from .text_runs import code_version as of_files

    return of_files(CODE_FILES)
