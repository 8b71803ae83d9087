"""The stored runs of chapter 20 (pe_lib.trained.text_runs): still made by the current code, and one of them
trained again from scratch gives the same numbers; saving and loading models; the experiment's layout."""

import hashlib
import pathlib
import re

import numpy as np
import pytest

import pe_lib
from pe_lib.trained import text_interventions, text_runs
from pe_lib.trained.language_model import text_loss

RESULTS = pathlib.Path(__file__).resolve().parents[2] / "notebooks" / "results"
STORED = RESULTS / "20_on_real_text"
TINY = dict(steps=3, seq_len=4, d_model=8, n_layers=1, batch_size=2)  # runs small enough for a unit test


@pytest.fixture(scope="module")
def stored():
    return text_runs.collect(STORED)


@pytest.fixture
def progress_shown(monkeypatch):
    """The (label, enabled) of every progress bar a training run asks for, instead of showing it."""
    from pe_lib.trained import training

    shown = []

    class Shown:
        def __init__(self, label, total, *, enabled=None):
            shown.append((label, enabled))

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def update(self, done):
            pass

    monkeypatch.setattr(training, "Progress", Shown)
    return shown


def _stored_cells():
    return [text_runs.load_results(path) for path in sorted(STORED.glob("*.json"))]


def test_every_stored_configuration_comes_from_the_current_code():
    cells = _stored_cells()
    assert cells, "no stored runs in notebooks/results/20_on_real_text: run make experiments"
    for cell in cells:
        assert cell["code_version"] == text_runs.code_version(), (
            f"the code behind {cell['kind']} {cell.get('name', cell['encoding'])} changed since it was stored: "
            "run make experiments (it redoes only what is stale)")
        expected = text_runs.SETTINGS | ({"steps": text_runs.SEARCH_STEPS} if cell["kind"] == "search" else {})
        extra = {name: extra for name, _, extra in text_runs.FINAL}.get(cell.get("name"), {})
        assert cell["settings"] == expected | extra, cell.get("name", cell["encoding"])
        assert "learning_rate" not in cell["settings"]  # each configuration's own rate is stored beside it


def test_every_final_configuration_is_stored_with_its_search_choice(stored):
    assert sorted(stored["final"]) == sorted(name for name, _, _ in text_runs.FINAL)
    for name, encoding, _ in text_runs.FINAL:
        cell = stored["final"][name]
        scores = stored["search"][encoding]
        chosen = min(scores, key=scores.get)  # lowest validation bits
        assert cell["learning_rate"] == float(chosen) == stored["learning_rates"][encoding], name
        assert cell["seeds"] == [0, 1, 2] and cell["n_characters"] == text_runs.N_CHARACTERS
        assert cell["lengths"] == [text_runs.SETTINGS["seq_len"] * f for f in text_runs.FACTORS]


def test_the_stored_search_chose_inside_its_grid(stored):
    # the fair protocol: the best rate of each encoding has a worse rate tried on either side of it
    for encoding, scores in stored["search"].items():
        rates = sorted(map(float, scores))
        assert len(rates) >= 3 and set(text_runs.FIRST_RATES) <= set(rates), encoding
        best = stored["learning_rates"][encoding]
        assert rates[0] < best < rates[-1], (encoding, rates, best)


def test_one_stored_configuration_again_from_scratch(stored):
    # the first point of the learning curve of a stored search configuration, trained again from scratch by the
    # same code path (search_cell: the same compiled step, the same batches, one model): it must agree exactly
    encoding = "alibi"
    rate = stored["learning_rates"][encoding]
    curve = stored["search_curves"][encoding][str(rate)]
    first = min(curve, key=int)
    again = text_runs.search_cell(encoding, rate, steps=int(first))
    assert again["curve"][first] == pytest.approx(curve[first], abs=1e-9)
    assert again["settings"] == text_runs.SETTINGS | {"steps": int(first)}


def test_stored_models_are_seed_zero_of_the_results(stored):
    for name, encoding, _ in text_runs.FINAL:
        path = STORED / f"final_{name.replace(' ', '_')}_seed0.npz"
        if name != encoding:  # the d_k control stores no model
            assert not path.exists(), name
            continue
        (model,) = text_runs.load_models(path)
        assert model.encoding == encoding and model.config.seed == 0
        assert model.seq_len == text_runs.SETTINGS["seq_len"] and model.config.steps == text_runs.SETTINGS["steps"]
        assert model.config.learning_rate == stored["final"][name]["learning_rate"]


def test_save_and_load_models(tmp_path):
    models = pe_lib.train_transformers("text", "learned", seeds=(3, 4), seq_len=4, steps=2, d_model=8, n_layers=1,
                                       batch_size=2, progress=False)
    text_runs.save_models(models, tmp_path / "m.npz")
    loaded = text_runs.load_models(tmp_path / "m.npz")
    for a, b in zip(models, loaded, strict=True):
        assert a.config == b.config
        np.testing.assert_array_equal(a.losses, b.losses)
        np.testing.assert_array_equal(a.params["pos"], b.params["pos"])
        np.testing.assert_array_equal(a.params["blocks"][0]["w_q"], b.params["blocks"][0]["w_q"])
        np.testing.assert_array_equal(a.initial_params["embed"], b.initial_params["embed"])


def test_experiment_layout_and_learned_lengths():
    search = {"learned": {"0.001": 2.0, "0.01": 2.5}, "none": {"0.001": 3.0, "0.01": 2.9}, "rope": {"0.01": 1.0}}
    # 101 steps: the training loss it reports is the mean of the last 100, which must leave the first out
    results, models = text_runs.text_experiment(("learned", "none"), search, seeds=(0,), factors=(1, 2),
                                                n_characters=64, steps=101, seq_len=4, d_model=8, n_layers=1,
                                                batch_size=2, progress=False)
    assert results["lengths"] == [4, 8] and results["learning_rates"] == {"learned": 0.001, "none": 0.01}
    assert results["search"] == {"learned": search["learned"], "none": search["none"]}  # only what was trained
    assert results["settings"] == text_runs.SETTINGS | {"steps": 101, "seq_len": 4, "d_model": 8, "n_layers": 1,
                                                        "batch_size": 2}
    assert [bpc is None for bpc in results["bpc"]["learned"][0]] == [False, True]  # no rows 4..7: length 8 unscored
    assert results["bpc"]["none"][0][1] > 0
    assert results["code_version"] == text_runs.code_version() and len(models["none"]) == 1
    assert models["none"][0].config.learning_rate == 0.01 and models["learned"][0].config.learning_rate == 0.001
    assert set(results) == {"settings", "seeds", "lengths", "n_characters", "code_version", "search",
                            "learning_rates", "bpc", "train_bpc"}
    assert results["seeds"] == [0] and results["n_characters"] == 64
    for encoding, (model,) in models.items():  # each number again from the model it belongs to
        for n, bpc in zip(results["lengths"], results["bpc"][encoding][0], strict=True):
            if bpc is not None:
                assert bpc == text_loss(model, n, n_characters=64), (encoding, n)
        assert len(model.losses) == 101
        assert results["train_bpc"][encoding] == [float(np.mean(model.losses[1:]) / np.log(2))]


def test_experiment_errors_in_full():
    with pytest.raises(TypeError) as rate:
        text_runs.text_experiment(("none",), {"none": {"0.01": 1.0}}, learning_rate=0.01, progress=False)
    assert str(rate.value) == "text_experiment() takes each encoding's learning rate from search=, not learning_rate="
    with pytest.raises(TypeError) as unknown:
        text_runs.text_experiment(("none",), {"none": {"0.01": 1.0}}, stepz=2, progress=False)
    assert str(unknown.value).startswith("text_experiment() got unknown keyword argument(s) stepz; the settings ")
    with pytest.raises(ValueError) as factor:
        text_runs.text_experiment(("none",), {"none": {"0.01": 1.0}}, factors=(1, 0), progress=False)
    assert str(factor.value) == "factor must be an integer >= 1, got 0"


@pytest.mark.parametrize("progress", [True, False])
def test_experiment_passes_progress_on(progress_shown, progress):
    shown = progress_shown
    text_runs.text_experiment(("none",), {"none": {"0.01": 1.0}}, seeds=(0, 1), factors=(1,), n_characters=8,
                              progress=progress, **TINY)
    assert shown == [("training a Transformer: task text, encoding none, 3 steps, seeds 0, 1", progress)]


def test_experiment_and_search_refuse_a_single_learning_rate():
    with pytest.raises(ValueError, match=r"no learning rates for \['alibi'\]"):
        text_runs.text_experiment(("none", "alibi"), {"none": {"0.01": 1.0}}, steps=2, seq_len=4, progress=False)
    with pytest.raises(TypeError, match="from search="):
        text_runs.text_experiment(("none",), {"none": {"0.01": 1.0}}, learning_rate=0.01, progress=False)
    with pytest.raises(TypeError, match="learning_rates="):
        text_runs.settings_search(("none",), learning_rate=0.01, progress=False)


def test_search_and_best_rates():
    found = text_runs.settings_search(("none",), learning_rates=(1e-3, 1e-2), steps=2, seq_len=4, d_model=8,
                                      n_layers=1, batch_size=2, progress=False)
    assert set(found["none"]) == {"0.001", "0.01"} and all(v > 0 for v in found["none"].values())
    assert text_runs.best_rates({"a": {"0.001": 2.5, "0.01": 2.4}, "b": {"0.001": 1.0, "0.01": 3.0}}) == {
        "a": 0.01, "b": 0.001}


def test_search_scores_each_rate_by_its_own_model_on_the_validation_text():
    """Each score is the validation loss of the search seed's model trained at that rate, rebuilt here from
    train_transformer and text_loss; neither rate is the default one (3e-3), so a rate that is not passed on
    shows, and the validation text scores differently from the held-out text the results read."""
    rates = (1e-3, 3e-2)
    found = text_runs.settings_search(("none",), learning_rates=rates, progress=False, **TINY)
    assert list(found) == ["none"] and list(found["none"]) == ["0.001", "0.03"]
    for rate in rates:
        model = pe_lib.train_transformer("text", "none", seed=text_runs.SEARCH_SEED, learning_rate=rate,
                                         progress=False, **(text_runs.SETTINGS | TINY))  # 4 heads, as the search
        assert model.config.learning_rate == rate
        expected = text_loss(model, TINY["seq_len"], text=text_runs.validation_text())
        assert found["none"][str(rate)] == pytest.approx(expected, abs=1e-6), rate
        other_text = text_loss(model, TINY["seq_len"], n_characters=len(text_runs.validation_text()) - 1)
        assert abs(other_text - expected) > 1e-3  # the check above can tell the two texts apart
    assert abs(found["none"]["0.001"] - found["none"]["0.03"]) > 1e-3  # and the two rates


def test_search_errors_name_the_search():
    with pytest.raises(TypeError) as rate:
        text_runs.settings_search(("none",), learning_rate=0.01, progress=False)
    assert str(rate.value) == "settings_search() takes the rates to try as learning_rates=, not learning_rate="
    with pytest.raises(TypeError) as unknown:
        text_runs.settings_search(("none",), stepz=2, progress=False)
    assert str(unknown.value).startswith("settings_search() got unknown keyword argument(s) stepz; the settings are ")


@pytest.mark.parametrize("progress", [True, False])
def test_search_passes_progress_on(progress_shown, progress):
    shown = progress_shown
    text_runs.settings_search(("none",), learning_rates=(1e-3, 1e-2), progress=progress, **TINY)
    assert shown == [("training a Transformer: task text, encoding none, 3 steps", progress)] * 2


def test_validation_text_is_apart_from_the_scored_text():
    held_out = pe_lib.corpus_split("kjv")[1]
    validation = text_runs.validation_text()
    assert len(validation) == text_runs.N_CHARACTERS + 1
    assert held_out.index(validation) >= text_runs.N_CHARACTERS + 1  # after the characters the results score
    assert abs(held_out.index(validation) - len(held_out) / 2) <= 1  # from the middle, as documented


def test_save_and_load_results(tmp_path):
    results = {"bpc": {"none": [[2.5, None]]}, "lengths": [4, 8], "code_version": "abc"}
    text_runs.save_results(results, tmp_path / "r.json")
    assert text_runs.load_results(tmp_path / "r.json") == results
    assert (tmp_path / "r.json").read_text().endswith("}\n")
    # indented by one space, keys sorted, a final newline: a re-run changes only the lines whose numbers change
    text_runs.save_results({"b": [1, 2], "a": {"y": 1, "x": None}}, tmp_path / "s.json")
    assert (tmp_path / "s.json").read_text() == '{\n "a": {\n  "x": null,\n  "y": 1\n },\n "b": [\n  1,\n  2\n ]\n}\n'


def test_the_code_version_ignores_docstrings_and_comments_but_not_code():
    """A corrected docstring or comment keeps the stored results valid; a changed constant or operator does not."""
    base = ('"""Module."""\n\ndef f(x):\n    """Twice x."""\n    return 2 * x  # doubled\n\n'
            'class C:\n    """A class."""\n')
    same = ('"""Module, reworded."""\n\ndef f(x):\n    """Two times x."""\n    return 2 * x  # twice\n\n'
            'class C:\n    """Another word."""\n')
    assert text_runs._code_only(base) == text_runs._code_only(same)
    for changed in (base.replace("2 * x", "3 * x"), base.replace("2 * x", "2 + x"), base.replace("def f", "def g"),
                    base.replace('    """Twice x."""\n', '    "Twice x."\n    x = -x\n')):
        assert text_runs._code_only(base) != text_runs._code_only(changed), changed
    # a body that is only a docstring keeps a statement
    assert "Pass" in text_runs._code_only('def f():\n    """Nothing."""\n')


def test_the_code_version_is_the_digest_its_docstring_describes():
    """The first 16 hex digits of SHA-256 over name, NUL, the file's code without docstrings, NUL, for each of
    CODE_FILES in order; computed here with hashlib from the files themselves."""
    root = pathlib.Path(text_runs.__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for name in text_runs.CODE_FILES:
        code = text_runs._code_only((root / name).read_text(encoding="utf-8"))
        digest.update(f"{name}\0{code}\0".encode())
    assert text_runs.code_version() == digest.hexdigest()[:16]


# ---- the resumable runs (text_runs.run_all): stored as they finish, skipped when current, redone when stale ------
SMALL = dict(steps=3, seq_len=4, d_model=8, n_layers=1, batch_size=2, n_heads=2)  # runs small enough for a unit test


def _fake_trainers(calls):
    """Stand-ins for search_cell and final_cell that record each call and return a stored-looking result: the
    skip/redo logic is tested without training (the real cells are tested below)."""
    def search(encoding, rate, **settings):
        calls.append(("search", encoding, rate))
        score = {1e-3: 3.0, 3e-3: 2.0, 1e-2: 2.5, 3e-2: 2.9}.get(rate, 4.0)  # best inside (3e-3) for "none"
        if encoding == "rope":  # best at the top corner, then worse past it: the grid grows by one rate
            score = {3e-3: 3.0, 1e-2: 2.5, 3e-2: 2.0, 1e-1: 2.2}[rate]
        return {"kind": "search", "encoding": encoding, "learning_rate": rate, "bpc": score, "curve": {},
                "code_version": text_runs.code_version()}

    def final(name, encoding, rate, *, seeds, **settings):
        calls.append(("final", name, rate))
        return ({"kind": "final", "name": name, "encoding": encoding, "learning_rate": rate, "seeds": list(seeds),
                 "settings": text_runs.SETTINGS | settings, "code_version": text_runs.code_version()}, ())
    return {"search": search, "final": final}


def test_run_all_stores_each_configuration_skips_what_is_current_and_redoes_what_is_stale(tmp_path):
    final = (("none", "none", {}), ("rope", "rope", {}), ("rope d_k 1", "rope", {"n_heads": 8}))
    calls, said = [], []
    out = text_runs.run_all(tmp_path, final=final, seeds=(0, 1, 2), trainers=_fake_trainers(calls), say=said.append,
                            **SMALL)
    # "none": best at the lowest rate, so one lower is tried (worse: the best is now inside); "rope": one higher
    assert calls == [("search", "none", 3e-3), ("search", "none", 1e-2), ("search", "none", 3e-2),
                     ("search", "none", 1e-3), ("search", "rope", 3e-3), ("search", "rope", 1e-2),
                     ("search", "rope", 3e-2), ("search", "rope", 1e-1), ("final", "none", 3e-3),
                     ("final", "rope", 3e-2), ("final", "rope d_k 1", 3e-2)]
    assert out["learning_rates"] == {"none": 3e-3, "rope": 3e-2}
    assert sorted(out["final"]) == sorted(n for n, _, _ in final)
    assert len(list(tmp_path.glob("*.json"))) == 11  # every configuration in its own file
    # each finished configuration says what it was, the time so far and an estimate of the time left
    assert all(re.fullmatch(r"done (search|final) .+ \(rate [0-9.e-]+\) in \d+ s \| elapsed \d+ s \| about \d+ s "
                            r"left \(\d+ configurations to go or check\)", line) for line in said), said
    assert said[-1].endswith("about 0 s left (0 configurations to go or check)")
    # again: everything is stored and current, nothing trains
    calls.clear(), said.clear()
    text_runs.run_all(tmp_path, final=final, seeds=(0, 1, 2), trainers=_fake_trainers(calls), say=said.append, **SMALL)
    assert calls == [] and len(said) == 11 and all(line.startswith("stored and current: ") for line in said)
    # planted: one configuration stored by other code, one with other settings, one unreadable: those three re-run
    stale = text_runs.load_results(tmp_path / "search_none_0.01.json") | {"code_version": "0" * 16}
    text_runs.save_results(stale, tmp_path / "search_none_0.01.json")
    other = text_runs.load_results(tmp_path / "final_rope_d_k_1.json")
    text_runs.save_results(other | {"settings": other["settings"] | {"n_heads": 4}}, tmp_path / "final_rope_d_k_1.json")
    (tmp_path / "final_none.json").write_text("{not json")
    text_runs.run_all(tmp_path, final=final, seeds=(0, 1, 2), trainers=_fake_trainers(calls), say=said.append, **SMALL)
    assert calls == [("search", "none", 1e-2), ("final", "none", 3e-3), ("final", "rope d_k 1", 3e-2)]
    # other seeds make a stored final configuration stale too
    calls.clear()
    text_runs.run_all(tmp_path, final=final[:1], encodings=("none",), seeds=(0, 1), trainers=_fake_trainers(calls),
                      say=said.append, **SMALL)
    assert calls == [("final", "none", 3e-3)]


def test_search_choice_extends_the_grid_past_a_corner():
    assert text_runs.search_choice({3e-3: 2.0, 1e-2: 1.0, 3e-2: 3.0}) == (1e-2, None)  # inside: done
    assert text_runs.search_choice({3e-3: 1.0, 1e-2: 2.0, 3e-2: 3.0}) == (3e-3, 1e-3)  # low corner: one lower
    assert text_runs.search_choice({3e-3: 3.0, 1e-2: 2.0, 3e-2: 1.0}) == (3e-2, 1e-1)  # high corner: one higher
    low, high = text_runs.RATE_LADDER[0], text_runs.RATE_LADDER[-1]
    assert text_runs.search_choice({low: 1.0, 1e-3: 2.0}) == (low, None)  # the ladder ends: no further rate
    assert text_runs.search_choice({3e-2: 2.0, high: 1.0}) == (high, None)


def test_real_cells_and_run_all_store_models_of_the_encodings_only(tmp_path):
    final = (("t5", "t5", {}), ("learned", "learned", {}), ("t5 wide", "t5", {"n_heads": 1}))
    out = text_runs.run_all(tmp_path, final=final, seeds=(0, 1), search_steps=3, first_rates=(1e-3, 1e-2, 3e-2),
                            say=lambda line: None, **SMALL)
    assert sorted(p.name for p in tmp_path.glob("*.npz")) == ["final_learned_seed0.npz", "final_t5_seed0.npz"]
    t5 = out["final"]["t5"]
    (model,) = text_runs.load_models(tmp_path / "final_t5_seed0.npz")
    assert model.config.seed == 0 and model.config.learning_rate == t5["learning_rate"] == out["learning_rates"]["t5"]
    L = SMALL["seq_len"]
    assert t5["lengths"] == [L, 2 * L, 4 * L, 8 * L] and len(t5["bpc"]) == 2
    # every number again from the stored model: bpc at each length, the positions of the 8L windows in blocks
    for k, n in enumerate(t5["lengths"]):
        assert t5["bpc"][0][k] == pytest.approx(text_loss(model, n, n_characters=text_runs.N_CHARACTERS), abs=1e-9)
    bits = text_interventions.window_bits(model, 8 * L, n_characters=text_runs.N_CHARACTERS)
    assert len(t5["positions"][0]) == 8 * L // text_runs.POSITION_BLOCK
    np.testing.assert_allclose(t5["positions"][0], text_interventions.position_means(bits, text_runs.POSITION_BLOCK),
                               atol=1e-9)
    clamped = text_interventions.window_bits(model, 2 * L, intervention="clamp buckets",
                                             n_characters=text_runs.N_CHARACTERS)
    assert sorted(t5["intervened"]) == ["clamp buckets", "hide far keys"]
    assert t5["intervened"]["clamp buckets"]["bpc"][0][1] == pytest.approx(clamped.mean(), abs=1e-9)
    learned = out["final"]["learned"]
    assert [b is None for b in learned["bpc"][0]] == [False, True, True, True] and learned["positions"] == []
    assert learned["intervened"] == {}
    # learning curves: validation bpc per seed after each block of steps, and the training loss in bits
    assert list(t5["curve"]) == ["3"] and len(t5["curve"]["3"]) == 2 and len(t5["train_curve"][0]) == 1
    assert t5["train_curve"][0][0] == pytest.approx(model.losses.mean() / np.log(2))
    search = out["search"]["t5"]
    assert sorted(search, key=float)[:3] == ["0.001", "0.01", "0.03"]
    cell = text_runs.load_results(tmp_path / "search_t5_0.01.json")
    assert cell["seed"] == text_runs.SEARCH_SEED and list(cell["curve"]) == ["3"] and cell["bpc"] > 0


def test_curve_points_are_every_hundred_steps():
    assert text_runs._checkpoints(600) == (100, 200, 300, 400, 500, 600)
    assert text_runs._checkpoints(3) == (3,) and text_runs._checkpoints(250) == (100, 200, 250)
