r"""The runs behind the chapter on real text, stored with the code version and settings that made them.

Training every encoding with several seeds on text takes minutes, more than a chapter's Run All may
take, so ``make experiments`` runs :func:`text_experiment` once and stores its results
(:func:`save_results`: a JSON file) and the trained models of one seed (:func:`save_models`: an ``.npz``).
The chapter reads them back; ``tests/trained/test_text_runs.py`` checks that the stored code version is
the current one and trains one configuration again from scratch to compare. Usage::

    search = settings_search(("alibi", "none"))       # validation bits per character of each learning rate
    results, models = text_experiment(("alibi", "none"), search, seeds=(0, 1, 2))
    results["learning_rates"]["alibi"]  # the rate of the lowest validation loss: the one its models trained with
    results["bpc"]["alibi"]     # (seeds, lengths) nested lists; None where a length is out of reach
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import json
import os

import numpy as np

from .._validate import check_positive_int
from .corpus import corpus_split
from .language_model import text_loss
from .training import (
    TrainedTransformer,
    TransformerConfig,
    _check_settings,
    _flatten,
    _init,
    _unflatten,
    train_transformers,
)

# the settings every encoding shares: a character model trained on windows of 64 characters; the learning rate is
# not one of them, each encoding trains with the rate its own search chose (settings_search, best_rates)
SETTINGS = dict(seq_len=64, steps=1000, d_model=32, n_layers=2, n_heads=4, batch_size=16)
FACTORS = (1, 2, 4, 8)  # evaluated at L, 2L, 4L, 8L
N_CHARACTERS = 65_536  # held-out characters scored at every length (a multiple of 8L = 512)
LEARNING_RATES = (1e-3, 3e-3, 1e-2, 3e-2)  # the per-encoding search, on validation text (1e-2 wins inside it)
SEARCH_SEED = 100  # the search trains its own seed, none of the seeds of the results
# the code a run depends on: a change in any of these files makes the stored results stale
CODE_FILES = ("trained/training.py", "trained/transformer.py", "trained/tasks.py", "trained/corpus.py",
              "trained/language_model.py", "trained/text_runs.py", "encodings/sinusoidal.py",
              "encodings/frequencies.py", "encodings/alibi.py",
              # the kernels the runs use: oneDNN at AVX2 and two XLA threads, pinned at import (issue 32)
              "trained/__init__.py", "book/machine.py")


def _code_only(source: str) -> str:
    """The syntax tree of a module's source without its docstrings (and so without comments or layout)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree, include_attributes=False)


def code_version() -> str:
    """SHA-256 (first 16 hex digits) of the code of the files of :data:`CODE_FILES`, in that order: their
    syntax trees without docstrings, so that a corrected comment or docstring keeps the stored results
    valid while any change to what the code does (a constant, an operator, a name) does not."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the pe_lib folder
    digest = hashlib.sha256()
    for name in CODE_FILES:
        with open(os.path.join(root, name), encoding="utf-8") as file:
            digest.update(name.encode() + b"\0" + _code_only(file.read()).encode() + b"\0")
    return digest.hexdigest()[:16]


def validation_text(corpus="kjv") -> str:
    """The held-out text the settings search scores on: :data:`N_CHARACTERS` + 1 characters from the middle of
    the held-out chapters, none of which the results score (they read the first :data:`N_CHARACTERS`)."""
    held_out = corpus_split(corpus)[1]  # about 400,000 characters: the halves do not overlap
    start = len(held_out) // 2
    return held_out[start:start + N_CHARACTERS + 1]


def settings_search(encodings, *, learning_rates=LEARNING_RATES, seed: int = SEARCH_SEED,
                    progress: bool | None = None, **settings) -> dict:
    """Validation bits per character (at the training length, on :func:`validation_text`) of one model per
    encoding and learning rate, trained with ``seed`` and otherwise :data:`SETTINGS`:
    ``{encoding: {str(learning_rate): bpc}}``."""
    if "learning_rate" in settings:
        raise TypeError("settings_search() takes the rates to try as learning_rates=, not learning_rate=")
    settings = _check_settings(SETTINGS | settings, "settings_search")
    text = validation_text()
    found = {}
    for encoding in encodings:
        found[encoding] = {}
        for rate in learning_rates:
            (model,) = train_transformers("text", encoding, seeds=(seed,), progress=progress,
                                          **(settings | {"learning_rate": rate}))
            found[encoding][str(rate)] = text_loss(model, settings["seq_len"], text=text)
    return found


def best_rates(search: dict) -> dict:
    """The learning rate with the lowest validation loss for each encoding of a :func:`settings_search`."""
    return {encoding: float(min(scores, key=scores.get)) for encoding, scores in search.items()}


def text_experiment(encodings, search: dict, *, seeds=(0, 1, 2), factors=FACTORS, n_characters: int = N_CHARACTERS,
                    progress: bool | None = None, **settings) -> tuple[dict, dict]:
    r"""Train every encoding on ``"text"`` with every seed (one vmapped run per encoding) and score each model
    with :func:`pe_lib.task_loss` at lengths :math:`fL` for :math:`f` in ``factors`` on the first
    ``n_characters`` held-out characters. Each encoding trains with the learning rate of its lowest validation
    loss in ``search`` (``{encoding: {str(rate): bpc}}``, from :func:`settings_search`; :func:`best_rates`);
    ``settings`` (as :func:`pe_lib.train_transformer`, learning rate excepted) update :data:`SETTINGS`.

    Returns ``(results, models)``: ``results`` is JSON-ready — ``settings`` (the shared ones), ``seeds``,
    ``lengths``, ``n_characters``, ``code_version``, ``search`` (as given), ``learning_rates[encoding]`` (the rate
    its models trained with), ``bpc[encoding]`` (``seeds x lengths`` floats, ``None`` where a learned table has
    no row) and ``train_bpc[encoding]`` (mean training loss of the last 100 steps, in bits);
    ``models[encoding]`` is the tuple of trained models.
    """
    if "learning_rate" in settings:
        raise TypeError("text_experiment() takes each encoding's learning rate from search=, not learning_rate=")
    missing = [encoding for encoding in encodings if encoding not in search]
    if missing:
        raise ValueError(f"search has no learning rates for {missing}; it covers {sorted(search)}")
    settings = _check_settings(SETTINGS | settings, "text_experiment")
    lengths = [settings["seq_len"] * check_positive_int(f, name="factor") for f in factors]
    rates = best_rates({encoding: search[encoding] for encoding in encodings})
    results = {"settings": {k: settings[k] for k in SETTINGS}, "seeds": list(seeds), "lengths": lengths,
               "n_characters": n_characters, "code_version": code_version(),
               "search": {encoding: dict(search[encoding]) for encoding in encodings}, "learning_rates": rates,
               "bpc": {}, "train_bpc": {}}
    models = {}
    for encoding in encodings:
        trained = train_transformers("text", encoding, seeds=seeds, progress=progress,
                                     **(settings | {"learning_rate": rates[encoding]}))
        reach = [n for n in lengths if encoding != "learned" or n <= settings["seq_len"]]
        results["bpc"][encoding] = [[text_loss(m, n, n_characters=n_characters) if n in reach else None
                                     for n in lengths] for m in trained]
        results["train_bpc"][encoding] = [float(m.losses[-100:].mean() / np.log(2)) for m in trained]
        models[encoding] = trained
    return results, models


def save_results(results: dict, path) -> None:
    """Write ``results`` (from :func:`text_experiment`) to ``path`` as indented JSON."""
    with open(path, "w") as file:
        json.dump(results, file, indent=1, sort_keys=True)
        file.write("\n")


def load_results(path) -> dict:
    """The results stored at ``path`` by :func:`save_results`."""
    with open(path) as file:
        return json.load(file)


def save_models(models, path) -> None:
    """Store trained models (a sequence of :class:`pe_lib.TrainedTransformer`) in one ``.npz``: each model's
    config, its parameters as one float32 vector and its losses."""
    arrays = {}
    for k, model in enumerate(models):
        arrays[f"config_{k}"] = np.array(json.dumps(dataclasses.asdict(model.config)))
        arrays[f"theta_{k}"] = _flatten(model.params)
        arrays[f"losses_{k}"] = model.losses
    np.savez_compressed(path, **arrays)


def load_models(path) -> tuple[TrainedTransformer, ...]:
    """The models stored by :func:`save_models`, in order (their initial parameters are drawn again from the
    seed, as training drew them)."""
    with np.load(path) as data:
        models = []
        for k in range(sum(name.startswith("config_") for name in data.files)):
            config = TransformerConfig(**json.loads(str(data[f"config_{k}"])))
            initial = _init(config, config.seed)
            models.append(TrainedTransformer(config=config, params=_unflatten(data[f"theta_{k}"], initial),
                                             initial_params=initial, losses=data[f"losses_{k}"]))
    return tuple(models)

