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
    _config,
    _flatten,
    _init,
    _train,
    _unflatten,
    train_transformers,
)

# the settings every encoding shares: a character model trained on windows of 64 characters; the learning rate is
# not one of them, each encoding trains with the rate its own search chose (settings_search, best_rates)
SETTINGS = dict(seq_len=128, steps=400, d_model=64, n_layers=2, n_heads=4, batch_size=16)
FACTORS = (1, 2, 4, 8)  # evaluated at L, 2L, 4L, 8L
N_CHARACTERS = 65_536  # held-out characters scored at every length (a multiple of 8L = 1024)
LEARNING_RATES = (1e-3, 3e-3, 1e-2, 3e-2)  # the per-encoding search, on validation text (1e-2 wins inside it)
SEARCH_SEED = 100  # the search trains its own seed, none of the seeds of the results
# the code a run depends on: a change in any of these files makes the stored results stale
CODE_FILES = ("trained/training.py", "trained/transformer.py", "trained/tasks.py", "trained/corpus.py",
              "trained/language_model.py", "trained/text_runs.py", "encodings/sinusoidal.py",
              "encodings/frequencies.py", "encodings/alibi.py", "encodings/t5.py", "trained/text_interventions.py",
              # the kernels the runs use: oneDNN at AVX2 and two XLA threads, pinned at import (issue 32)
              "trained/__init__.py", "book/machine.py",
              # the per-layer schemes and the rope_scaling the models may apply (chapter 21)
              "modern/layer_types.py", "modern/rope_scaling.py")


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


def code_version(files=CODE_FILES) -> str:
    """SHA-256 (first 16 hex digits) of the code of ``files`` (paths inside ``pe_lib``; by default
    :data:`CODE_FILES`), in that order: their
    syntax trees without docstrings, so that a corrected comment or docstring keeps the stored results
    valid while any change to what the code does (a constant, an operator, a name) does not."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the pe_lib folder
    digest = hashlib.sha256()
    for name in files:
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
            fields = json.loads(str(data[f"config_{k}"]))
            fields["rope_scaling"] = tuple(tuple(item) for item in fields.get("rope_scaling", ()))  # JSON lists
            config = TransformerConfig(**fields)
            initial = _init(config, config.seed)
            models.append(TrainedTransformer(config=config, params=_unflatten(data[f"theta_{k}"], initial),
                                             initial_params=initial, losses=data[f"losses_{k}"]))
    return tuple(models)



# ---- the resumable runs of make experiments (issue 27): one stored file per finished configuration ----------------
SEARCH_STEPS = 100  # the rate search trains this many steps (a quarter of the final budget, to fit make experiments)
RATE_LADDER = (3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1)  # the search starts at the middle three, then extends past a corner
FIRST_RATES = (3e-3, 1e-2, 3e-2)
CURVE_EVERY = 100  # steps between the points of a learning curve (a multiple of training.CHUNK_STEPS)
CURVE_CHARACTERS = 16_384  # validation characters a learning-curve point scores
POSITION_BLOCK = 16  # the per-position loss inside the 8L windows is stored in blocks of this many positions
# the final configurations: (name, encoding, settings that differ from SETTINGS); the d_k control for RoPE trains
# at the rate RoPE's search chose for d_k 16 (no search of its own: say so)
FINAL = (("none", "none", {}), ("sinusoidal", "sinusoidal", {}), ("learned", "learned", {}), ("rope", "rope", {}),
         ("alibi", "alibi", {}), ("t5", "t5", {}),
         ("rope d_k 8", "rope", {"n_heads": 8}), ("rope d_k 32", "rope", {"n_heads": 2}))


def validation_curve(models_by_steps: dict, seq_len: int) -> dict:
    """``{steps: [validation bpc of each seed]}`` on the first :data:`CURVE_CHARACTERS` of :func:`validation_text`."""
    text = validation_text()[: CURVE_CHARACTERS + 1]
    return {str(n): [text_loss(m, seq_len, text=text) for m in models] for n, models in sorted(models_by_steps.items())}


def _checkpoints(steps: int) -> tuple[int, ...]:
    return tuple(range(CURVE_EVERY, steps, CURVE_EVERY)) + (steps,)


def search_cell(encoding: str, rate: float, *, steps: int = SEARCH_STEPS, **settings) -> dict:
    """One cell of the rate search: seed :data:`SEARCH_SEED` trained ``steps`` steps at ``rate``, scored on
    :func:`validation_text` at L (``bpc``), with its learning curve (``curve``: :func:`validation_curve`)."""
    settings = _check_settings(SETTINGS | settings | {"steps": steps, "learning_rate": rate}, "search_cell")
    config = _config("text", encoding, seed=SEARCH_SEED, **settings)
    kept = _train(config, (SEARCH_SEED,), False, learning_rates=(config.learning_rate,),
                  checkpoints=_checkpoints(steps))
    by_steps = {n: models for (_, n), models in kept.items()}
    (model,) = by_steps[steps]
    return {"kind": "search", "encoding": encoding, "learning_rate": rate, "settings": _shared_settings(settings),
            "seed": SEARCH_SEED, "bpc": text_loss(model, settings["seq_len"], text=validation_text()),
            "curve": validation_curve(by_steps, settings["seq_len"]), "code_version": code_version()}


def _shared_settings(settings: dict) -> dict:
    return {k: settings[k] for k in SETTINGS}


def final_cell(name: str, encoding: str, rate: float, *, seeds=(0, 1, 2), factors=FACTORS,
               n_characters: int = N_CHARACTERS, **settings) -> tuple[dict, tuple]:
    """One final configuration: every seed (one vmapped run) trained at ``rate``, scored on the first
    ``n_characters`` held-out characters at :math:`fL` (``bpc``: seeds x lengths, ``None`` past a learned table),
    the loss at each position of the longest windows (``positions``: seeds x blocks of :data:`POSITION_BLOCK`),
    the same with the interventions of :mod:`pe_lib.trained.text_interventions` (``intervened``), the validation
    learning curve (``curve``) and the training loss in blocks of 50 steps (``train_curve``, bits).
    Returns ``(result, models)``."""
    from .text_interventions import window_bits

    settings = _check_settings(SETTINGS | settings | {"learning_rate": rate}, "final_cell")
    seeds = tuple(seeds)
    config = _config("text", encoding, seed=seeds[0], **settings)
    kept = _train(config, seeds, False, learning_rates=(config.learning_rate,),
                  checkpoints=_checkpoints(settings["steps"]))
    by_steps = {n: models for (_, n), models in kept.items()}
    models = tuple(by_steps[settings["steps"]])
    L = settings["seq_len"]
    lengths = [L * check_positive_int(f, name="factor") for f in factors]
    result = {"kind": "final", "name": name, "encoding": encoding, "learning_rate": rate,
              "settings": _shared_settings(settings), "seeds": list(seeds), "lengths": lengths,
              "n_characters": n_characters, "code_version": code_version(),
              "curve": validation_curve(by_steps, L),
              "train_curve": [(m.losses.reshape(-1, min(50, m.losses.size)).mean(axis=1) / np.log(2)).tolist()
                              for m in models],
              "bpc": [], "positions": [], "intervened": {}}
    arms = ([] if encoding == "learned" else ["hide far keys"]) + (["clamp buckets"] if encoding == "t5" else [])
    for model in models:
        row = []
        for n in lengths:
            if encoding == "learned" and n > L:
                row.append(None)
                continue
            bits = window_bits(model, n, n_characters=n_characters)
            row.append(float(bits.mean()))
        result["bpc"].append(row)
        if encoding != "learned":  # bits: the windows of the longest length
            result["positions"].append(bits.reshape(bits.shape[0], -1, POSITION_BLOCK).mean(axis=(0, 2)).tolist())
        for arm in arms:
            entry = result["intervened"].setdefault(arm, {"bpc": [], "positions": []})
            scores = []
            for n in lengths:
                bits = window_bits(model, n, intervention=arm, n_characters=n_characters)
                scores.append(float(bits.mean()))
            entry["bpc"].append(scores)
            entry["positions"].append(bits.reshape(bits.shape[0], -1, POSITION_BLOCK).mean(axis=(0, 2)).tolist())
    return result, models


def cell_file(folder, cell: dict) -> str:
    """The file a configuration of :func:`plan` is stored in, inside ``folder``."""
    if cell["kind"] == "search":
        return os.path.join(folder, f"search_{cell['encoding']}_{cell['learning_rate']:g}.json")
    return os.path.join(folder, f"final_{cell['name'].replace(' ', '_')}.json")


def is_current(stored: dict | None, cell: dict) -> bool:
    """Whether a stored configuration was made by the current code with the settings ``cell`` asks for."""
    return (stored is not None and stored.get("code_version") == code_version()
            and stored.get("settings") == cell["settings"] and stored.get("learning_rate") == cell["learning_rate"]
            and stored.get("seeds", [SEARCH_SEED]) == cell.get("seeds", [SEARCH_SEED]))


def _load_if_present(path):
    try:
        return load_results(path)
    except (OSError, ValueError):
        return None


def search_choice(scores: dict) -> tuple[float, float | None]:
    """``(best rate, next rate to try)`` of a search ``{rate: bpc}`` along :data:`RATE_LADDER`: the next rate is
    the ladder's neighbour beyond the best when the best lies at a corner of the rates tried (``None`` when the
    best is inside, or the ladder ends)."""
    tried = sorted(scores)
    best = min(tried, key=scores.get)
    k = RATE_LADDER.index(best)
    if best == tried[0] and k > 0:
        return best, RATE_LADDER[k - 1]
    if best == tried[-1] and k + 1 < len(RATE_LADDER):
        return best, RATE_LADDER[k + 1]
    return best, None


def run_all(folder, *, encodings=None, final=FINAL, seeds=(0, 1, 2), search_steps: int = SEARCH_STEPS,
            first_rates=FIRST_RATES, say=print, trainers=None, **settings) -> dict:
    """Run (or skip when stored and current, :func:`is_current`) every configuration of the search and of
    ``final`` into ``folder``, each stored as soon as it finishes, with a progress line (``say``) giving the
    configuration, the elapsed time and an estimate of the time left. Returns :func:`collect`'s results."""
    import time

    trainers = trainers or {"search": search_cell, "final": final_cell}
    os.makedirs(folder, exist_ok=True)
    settings = _check_settings(SETTINGS | settings, "run_all")
    shared = _shared_settings(settings)
    encodings = tuple(dict.fromkeys(e for _, e, _ in final)) if encodings is None else tuple(encodings)
    start, done_cost, done_time = time.time(), 0, 0.0

    def step_cost(cell):  # model-steps of a configuration: the unit of the time estimate
        return (search_steps if cell["kind"] == "search" else settings["steps"] * len(seeds)) * (
            cell["settings"]["n_heads"] / 4 if cell["kind"] == "final" else 1)

    def todo_cost(pending):
        return sum(step_cost(c) for c in pending)

    def run(cell, pending):
        nonlocal done_cost, done_time
        path = cell_file(folder, cell)
        if is_current(_load_if_present(path), cell):
            say(f"stored and current: {os.path.basename(path)}")
            return load_results(path)
        t = time.time()
        if cell["kind"] == "search":
            out = trainers["search"](cell["encoding"], cell["learning_rate"], **cell["settings"])
            out["settings"] = cell["settings"]
            models = None
        else:
            out, models = trainers["final"](cell["name"], cell["encoding"], cell["learning_rate"], seeds=seeds,
                                            **(shared | cell["extra"]))
        save_results(out, path)
        if models is not None and cell["name"] in encodings and models:
            save_models(models[:1], path.replace(".json", "_seed0.npz"))
        done_cost += step_cost(cell)
        done_time += time.time() - t
        left = done_time / done_cost * todo_cost(pending) if done_cost else float("nan")
        say(f"done {cell['kind']} {cell.get('name', cell['encoding'])} (rate {cell['learning_rate']:g}) in "
            f"{time.time() - t:.0f} s | elapsed {time.time() - start:.0f} s | about {left:.0f} s left "
            f"({len(pending)} configurations to go or check)")
        return out

    search_shared = shared | {"steps": search_steps}
    rates = {}
    for k, encoding in enumerate(encodings):
        scores, queue = {}, list(first_rates)
        while queue:
            rate = queue.pop(0)
            cell = {"kind": "search", "encoding": encoding, "learning_rate": rate, "settings": search_shared}
            pending = [{"kind": "search", "settings": search_shared}] * (len(queue) + 3 * (len(encodings) - k - 1))
            pending += [{"kind": "final", "settings": shared | extra} for _, _, extra in final]
            scores[rate] = run(cell, pending)["bpc"]
            if not queue:
                best, more = search_choice(scores)
                if more is not None:
                    queue.append(more)
        rates[encoding] = search_choice(scores)[0]
    for k, (name, encoding, extra) in enumerate(final):
        cell = {"kind": "final", "name": name, "encoding": encoding, "learning_rate": rates[encoding],
                "settings": shared | extra, "extra": extra, "seeds": list(seeds)}
        run(cell, [{"kind": "final", "settings": shared | e} for _, _, e in final[k + 1:]])
    return collect(folder)


def collect(folder) -> dict:
    """Every stored configuration of ``folder`` gathered: ``search[encoding][str(rate)]`` (validation bpc),
    ``search_curves``, ``learning_rates[encoding]`` (the search's choice), and for each final configuration by
    name: ``bpc``, ``positions``, ``intervened``, ``curve``, ``train_curve``, ``settings``, ``learning_rate``."""
    out = {"search": {}, "search_curves": {}, "final": {}}
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".json"):
            continue
        cell = load_results(os.path.join(folder, name))
        if cell["kind"] == "search":
            out["search"].setdefault(cell["encoding"], {})[str(cell["learning_rate"])] = cell["bpc"]
            out["search_curves"].setdefault(cell["encoding"], {})[str(cell["learning_rate"])] = cell["curve"]
        else:
            out["final"][cell["name"]] = cell
    out["learning_rates"] = {e: search_choice({float(r): s for r, s in scores.items()})[0]
                             for e, scores in out["search"].items()}
    return out
