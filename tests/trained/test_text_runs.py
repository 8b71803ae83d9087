"""The stored runs of chapter 20 (pe_lib.trained.text_runs): still made by the current code, and one of them
trained again from scratch gives the same numbers; saving and loading models; the experiment's layout."""

import hashlib
import pathlib

import numpy as np
import pytest

import pe_lib
from pe_lib.trained import text_runs
from pe_lib.trained.language_model import text_loss

RESULTS = pathlib.Path(__file__).resolve().parents[2] / "notebooks" / "results"
STORED = RESULTS / "20_on_real_text.json"
TOLERANCE = 0.005  # bits per character: one seed alone against the same seed trained in a vmapped batch of three
TINY = dict(steps=3, seq_len=4, d_model=8, n_layers=1, batch_size=2)  # runs small enough for a unit test


@pytest.fixture(scope="module")
def stored():
    return text_runs.load_results(STORED)


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


def test_stored_results_come_from_the_current_code(stored):
    assert stored["code_version"] == text_runs.code_version(), (
        "the code behind notebooks/results/20_on_real_text.json changed since it was stored: run make experiments")
    assert stored["settings"] == text_runs.SETTINGS and stored["n_characters"] == text_runs.N_CHARACTERS
    assert "learning_rate" not in stored["settings"]  # one shared rate would misstate runs that each use their own


def test_stored_rates_are_the_stored_search_choice(stored):
    for encoding, scores in stored["search"].items():
        assert sorted(map(float, scores)) == sorted(text_runs.LEARNING_RATES), encoding
        chosen = min(text_runs.LEARNING_RATES, key=lambda rate: scores[str(rate)])  # lowest validation bits
        assert stored["learning_rates"][encoding] == chosen, encoding
    assert set(stored["learning_rates"]) == set(stored["search"]) == set(stored["bpc"])


def test_one_stored_configuration_again_from_scratch(stored):
    encoding, seed = "alibi", stored["seeds"][0]
    rate = min(text_runs.LEARNING_RATES, key=lambda r: stored["search"][encoding][str(r)])  # the search's choice
    assert stored["learning_rates"][encoding] == rate  # the rate the stored runs say they used is the one re-run
    model = pe_lib.train_transformer("text", encoding, seed=seed, progress=False,
                                     **(stored["settings"] | {"learning_rate": rate}))
    assert model.config.learning_rate == rate
    for k in (0, len(stored["lengths"]) - 1):  # the training length and the longest
        again = pe_lib.task_loss(model, stored["lengths"][k], n_characters=stored["n_characters"])
        assert again == pytest.approx(stored["bpc"][encoding][0][k], abs=TOLERANCE), stored["lengths"][k]


def test_one_search_score_again_from_scratch(stored):
    # the validation loss the stored rate was chosen by, trained again (the search's seed, the chosen rate)
    encoding = "alibi"
    rate = stored["learning_rates"][encoding]
    model = pe_lib.train_transformer("text", encoding, seed=text_runs.SEARCH_SEED, progress=False,
                                     **(stored["settings"] | {"learning_rate": rate}))
    again = text_loss(model, stored["settings"]["seq_len"], text=text_runs.validation_text())
    assert again == pytest.approx(stored["search"][encoding][str(rate)], abs=TOLERANCE)


def test_stored_models_are_seed_zero_of_the_results(stored):
    models = text_runs.load_models(RESULTS / "20_on_real_text_models.npz")
    assert [m.encoding for m in models] == ["none", "sinusoidal", "learned", "rope", "alibi", "t5"]
    for m in models:
        assert m.config.seed == 0 and m.seq_len == stored["settings"]["seq_len"]
        assert m.config.learning_rate == stored["learning_rates"][m.encoding]


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
