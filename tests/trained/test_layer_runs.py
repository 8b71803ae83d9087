"""Positions that differ from layer to layer in the trained model (chapter 21): each layer's rotation and mask
against numpy written here, the forward pass slice by slice, PI and YaRN's inputs, training on from given
weights, bad input; and the stored runs of notebooks/results/21_layers (current, and one trained again)."""

import dataclasses
import pathlib

import numpy as np
import pytest

import pe_lib
from pe_lib.encodings.frequencies import frequencies
from pe_lib.trained import layer_runs, text_runs, training
from pe_lib.trained import transformer as tf

STORED = pathlib.Path(__file__).resolve().parents[2] / "notebooks" / "results" / "21_layers"
SIZES = dict(d_model=16, n_heads=2, causal=True, max_len=12)  # d_k = 8: 4 pairs


def _inputs(encoding, seq_len=12, **extra):
    return tf.position_inputs(encoding, seq_len, **(SIZES | extra))


def test_the_layered_encodings_agree_between_training_and_the_model():
    assert training.LAYERED == tf.LAYERED


@pytest.mark.parametrize(("encoding", "rope", "window"), [
    ("rope+nope", [1, 1, 1, 0, 1, 1, 1, 0], [None] * 8),  # SmolLM3: no RoPE in layers 3, 7
    ("swa-rope+nope", [1, 1, 1, 0, 1, 1, 1, 0], [32, 32, 32, None] * 2),  # Command R7B: RoPE only where sliding
    ("chunked-rope+nope", [1, 1, 1, 0, 1, 1, 1, 0], [32, 32, 32, None] * 2),  # Llama 4: chunked RoPE, global NoPE
    ("p-rope", [1] * 8, [None] * 8),
])
def test_each_layer_rotates_and_sees_as_the_model_it_copies(encoding, rope, window):
    plan = tf.layer_plan(encoding, 8)
    assert [int(la["rope"]) for la in plan] == rope
    assert [la["window"] for la in plan] == window
    kinds = {"swa-rope+nope": "sliding", "chunked-rope+nope": "chunked"}
    assert [la["attention"] for la in plan] == [kinds.get(encoding, "full") if w else "full" for w in window]


def test_a_rope_layer_is_rope_and_a_nope_layer_is_none():
    given = _inputs("rope+nope", n_layers=4)
    rope, none = _inputs("rope"), _inputs("none")
    assert given["cos"].shape == (4, 12, 4) and given["bias"].shape == (4, 2, 12, 12)
    for layer in range(3):
        np.testing.assert_array_equal(given["cos"][layer], rope["cos"])
        np.testing.assert_array_equal(given["sin"][layer], rope["sin"])
        np.testing.assert_array_equal(given["bias"][layer], rope["bias"])
    np.testing.assert_array_equal(given["cos"][3], np.ones((12, 4)))
    np.testing.assert_array_equal(given["sin"][3], np.zeros((12, 4)))
    np.testing.assert_array_equal(given["bias"][3], none["bias"])


def test_windows_hide_the_keys_numpy_says_they_hide():
    n, w = 70, tf.WINDOW  # past two windows of 32
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    sliding = (j <= i) & (i - j < w)  # the W keys m-W+1 .. m
    chunked = (j <= i) & (i // w == j // w)  # the keys of the query's own chunk of 32
    for encoding, seen in (("swa-rope+nope", sliding), ("chunked-rope+nope", chunked)):
        bias = _inputs(encoding, n, n_layers=4)["bias"]
        for layer, expected in enumerate((seen, seen, seen, j <= i)):
            visible = np.isfinite(bias[layer])  # (H, L, L)
            assert (visible == expected).all(), (encoding, layer, int((visible != expected).sum()))
    assert sliding.sum(axis=1).max() == w and chunked[w].sum() == 1  # a chunk's first query sees itself only


def test_p_rope_rotates_only_its_fastest_quarter():
    given = _inputs("p-rope", d_model=32, n_heads=2, n_layers=3)  # d_k = 16: 8 pairs, 2 rotate
    rope = _inputs("rope", d_model=32, n_heads=2)
    for layer in range(3):
        np.testing.assert_array_equal(given["cos"][layer][:, :2], rope["cos"][:, :2])
        np.testing.assert_array_equal(given["cos"][layer][:, 2:], 1.0)
        np.testing.assert_array_equal(given["sin"][layer][:, 2:], 0.0)
    assert np.abs(given["sin"][0][:, :2]).max() > 0.9  # the fast pairs do turn


def test_the_forward_pass_reads_each_layer_its_own_slice():
    config = training._config("text", "rope", seq_len=12, steps=1, seed=0, d_model=16, n_layers=4, n_heads=2,
                              batch_size=2, learning_rate=1e-2, vocab_size=8, offset=1)
    params = training._init(config, 0)
    tokens = np.arange(24).reshape(2, 12) % 128
    rope, none = _inputs("rope"), _inputs("none")
    stacked = rope | {k: np.stack([rope[k]] * 4) for k in ("cos", "sin", "bias")}
    np.testing.assert_array_equal(np.asarray(tf.forward(params, tokens, stacked)),
                                  np.asarray(tf.forward(params, tokens, rope)))
    # layer 3 without RoPE by hand: the same as "rope+nope"
    by_hand = dict(stacked)
    for k in ("cos", "sin", "bias"):
        by_hand[k] = stacked[k].copy()
        by_hand[k][3] = none[k]
    mixed = np.asarray(tf.forward(params, tokens, _inputs("rope+nope", n_layers=4)))
    np.testing.assert_array_equal(mixed, np.asarray(tf.forward(params, tokens, by_hand)))
    assert np.abs(mixed - np.asarray(tf.forward(params, tokens, rope))).max() > 1e-3


def test_pi_and_yarn_rotate_by_the_scaled_angles():
    s, L, d_k = 4.0, 12, 8
    omega = frequencies(d_k, base=tf.ROPE_BASE)
    m = np.arange(3 * L)
    config = training._config("text", "rope", seq_len=L, steps=1, seed=0, d_model=16, n_layers=1, n_heads=2,
                              batch_size=2, learning_rate=1e-2, vocab_size=8, offset=1)
    pi = training._inputs(dataclasses.replace(config, rope_scaling=(("factor", s), ("rope_type", "linear"))), 3 * L)
    np.testing.assert_allclose(pi["cos"], np.cos(np.outer(m / s, omega)), atol=1e-6)  # position m read as m / s
    yarn_items = (("factor", s), ("original_max_position_embeddings", L), ("rope_type", "yarn"))
    yarn = training._inputs(dataclasses.replace(config, rope_scaling=yarn_items), 3 * L)
    factor = 0.1 * np.log(s) + 1  # YaRN's attention factor (Peng et al. 2023, eq. 22 as transformers applies it)
    assert np.hypot(yarn["cos"], yarn["sin"]) == pytest.approx(factor, abs=1e-6)
    np.testing.assert_allclose(yarn["cos"][:, 0], factor * np.cos(m * omega[0]), atol=1e-6)  # the fastest pair kept


def test_training_on_from_given_weights():
    config = training._config("text", "rope", seq_len=8, steps=2, seed=0, d_model=8, n_layers=1, n_heads=1,
                              batch_size=2, learning_rate=1e-2, vocab_size=8, offset=1)
    plain = training._train(config, (0,), False)[0]
    from_init = training._train(config, (0,), False, initial={0: training._init(config, 0)})[0]
    np.testing.assert_array_equal(training._flatten(plain.params), training._flatten(from_init.params))
    on = training._train(config, (0,), False, initial={0: plain.params})[0]  # two more steps, same batches
    assert np.abs(training._flatten(on.params) - training._flatten(plain.params)).max() > 1e-4
    np.testing.assert_array_equal(on.initial_params["embed"], plain.params["embed"])


def test_bad_layered_settings_are_refused():
    with pytest.raises(ValueError, match="n_layers >= 4, got n_layers=2"):
        pe_lib.train_transformer("text", "rope+nope", n_layers=2, steps=1, progress=False)
    with pytest.raises(ValueError, match="needs a causal task, got 'reverse'"):
        pe_lib.train_transformer("reverse", "p-rope", steps=1, progress=False)
    with pytest.raises(ValueError, match="position_inputs needs n_layers"):
        tf.position_inputs("p-rope", 4, d_model=8, n_heads=1, causal=True, max_len=4)
    with pytest.raises(ValueError, match="encoding must be one of"):
        pe_lib.train_transformer("text", "rope+alibi", steps=1, progress=False)
    with pytest.raises(ValueError, match="p-rope rotates pairs"):
        pe_lib.train_transformer("text", "p-rope", d_model=6, n_heads=2, steps=1, progress=False)


# ---- the stored runs ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def stored():
    if not any(STORED.glob("final_*.json")):
        pytest.fail("no stored runs in notebooks/results/21_layers: run make experiments")
    return text_runs.collect(STORED)


def test_every_stored_run_is_current_and_complete(stored):
    assert sorted(stored["final"]) == sorted(name for name, _, _ in layer_runs.FINAL)
    for name, cell in stored["final"].items():
        assert cell["code_version"] == text_runs.code_version(), name
        assert cell["settings"] == layer_runs.SETTINGS and cell["seeds"] == [0, 1, 2], name
        assert cell["learning_rate"] == stored["learning_rates"][cell["encoding"]], name
    for encoding, scores in stored["search"].items():  # the best rate of each scheme inside the rates it tried
        rates = sorted(map(float, scores))
        assert rates[0] < stored["learning_rates"][encoding] < rates[-1], (encoding, rates)
    drope = text_runs.load_results(layer_runs.drope_file(STORED))
    assert drope["code_version"] == layer_runs.code_version()
    assert drope["learning_rate"] == stored["learning_rates"]["rope"]
    for arm, scores in drope["recalibration_search"].items():  # each recalibration's rate inside its search
        rates = sorted(map(float, scores))
        assert rates[0] < drope["recalibration_rates"][arm] < rates[-1], (arm, rates)
        assert drope["recalibration_rates"][arm] == float(min(scores, key=scores.get)), arm
    # DroPE's RoPE arm is the RoPE models of the first experiment trained again: the same numbers
    np.testing.assert_allclose(drope["bpc"]["RoPE"], stored["final"]["rope"]["bpc"], rtol=0, atol=1e-12)


def test_one_stored_configuration_again_from_scratch(stored):
    encoding = "swa-rope+nope"
    rate = stored["learning_rates"][encoding]
    curve = stored["search_curves"][encoding][str(rate)]
    again = text_runs.search_cell(encoding, rate, **(layer_runs.SETTINGS | {"steps": text_runs.SEARCH_STEPS}))
    assert again["bpc"] == pytest.approx(stored["search"][encoding][str(rate)], abs=1e-9)
    assert set(again["curve"]) == set(curve)
    for steps, scores in curve.items():
        assert again["curve"][steps] == pytest.approx(scores, abs=1e-9), steps


# ---- the experiment code, at sizes a unit test can afford ---------------------------------------------------------
TINY = dict(steps=20, seq_len=16, d_model=16, n_heads=2, batch_size=4)


def test_the_ladder_extends_a_search_past_its_corners():
    ladder = layer_runs.RECALIBRATION_LADDER
    assert layer_runs._ladder_choice({1e-3: 2.0, 3e-3: 2.5, 1e-2: 3.0}) == (1e-3, 3e-4)
    assert layer_runs._ladder_choice({1e-3: 3.0, 3e-3: 2.5, 1e-2: 2.0}) == (1e-2, 3e-2)
    assert layer_runs._ladder_choice({1e-3: 3.0, 3e-3: 2.0, 1e-2: 3.0}) == (3e-3, None)
    assert layer_runs._ladder_choice({ladder[0]: 1.0, ladder[1]: 2.0}) == (ladder[0], None)  # the ladder ends
    assert layer_runs._ladder_choice({ladder[-2]: 2.0, ladder[-1]: 1.0}) == (ladder[-1], None)
    assert ladder[3:] == text_runs.RATE_LADDER and ladder[:3] == (1e-5, 3e-5, 1e-4)


def test_drope_cell_layout_and_what_each_arm_is():
    lines = []
    out = layer_runs.drope_cell(1e-2, seeds=(0, 1), factors=(1, 2), n_characters=1024, recalibration_steps=3,
                                say=lines.append, **TINY)
    assert out["lengths"] == [16, 32] and out["seeds"] == [0, 1] and out["code_version"] == layer_runs.code_version()
    assert set(out["bpc"]) == {"RoPE", "RoPE removed", "DroPE", "DroPE, 12 steps", "PI", "PI + recalibration",
                               "YaRN", "YaRN + recalibration"}
    bpc = {arm: np.array(v) for arm, v in out["bpc"].items()}
    assert all(v.shape == (2, 2) for v in bpc.values())
    for arm in ("PI", "YaRN", "PI + recalibration", "YaRN + recalibration"):  # at L: the RoPE models themselves
        np.testing.assert_array_equal(bpc[arm][:, 0], bpc["RoPE"][:, 0])
    assert np.abs(bpc["RoPE removed"] - bpc["RoPE"]).min() > 1e-3  # reading without RoPE changes every score
    for arm, scores in out["recalibration_search"].items():  # every search ends with its best inside the rates
        rates = sorted(map(float, scores))
        assert rates[0] < out["recalibration_rates"][arm] < rates[-1] or len(rates) >= 3, (arm, rates)
        assert out["recalibration_rates"][arm] == float(min(scores, key=scores.get))
    assert set(out["recalibration_search"]) == {"DroPE", "DroPE, 12 steps", "PI + recalibration, s = 2",
                                                "YaRN + recalibration, s = 2"}
    assert len(lines) == 7 and lines[0].startswith("DroPE, PI and YaRN: RoPE models trained")
    # DroPE's models are the RoPE models trained on without RoPE: its score at L is that of such a model
    settings = layer_runs._check_settings(layer_runs.SETTINGS | TINY, "test")
    rope = layer_runs._train(layer_runs._config("text", "rope", seed=0, **(settings | {"learning_rate": 1e-2})),
                             (0, 1), False)  # the same vmapped run of two seeds: the same weights
    rate = out["recalibration_rates"]["DroPE"]
    config = layer_runs._config("text", "none", seed=0, **(settings | {"learning_rate": rate}))
    again, _ = layer_runs._recalibrated(rope, config, 3)
    assert again.encoding == "none"
    assert bpc["DroPE"][0, 0] == pytest.approx(pe_lib.task_loss(again, 16, n_characters=1024), abs=1e-9)


def test_drope_cell_is_silent_without_say(capsys):
    out = layer_runs.drope_cell(1e-2, seeds=(0,), factors=(1,), n_characters=256, recalibration_steps=2, **TINY)
    assert list(out["lengths"]) == [16] and capsys.readouterr().out == ""


def test_run_drope_stores_once_and_skips_what_is_current(tmp_path, monkeypatch):
    for rate, bits in ((1e-3, 3.0), (3e-3, 2.0), (1e-2, 2.5)):  # a stored rate search that chose 3e-3 for RoPE
        text_runs.save_results({"kind": "search", "encoding": "rope", "learning_rate": rate, "bpc": bits,
                                "curve": {}}, tmp_path / f"search_rope_{rate:g}.json")
    calls = []

    def fake(rate, say=None):
        calls.append(rate)
        return {"code_version": layer_runs.code_version(), "learning_rate": rate, "bpc": {}}

    monkeypatch.setattr(layer_runs, "drope_cell", fake)
    said = []
    first = layer_runs.run_drope(tmp_path, say=said.append)
    assert calls == [3e-3] and first["learning_rate"] == 3e-3
    assert pathlib.Path(layer_runs.drope_file(tmp_path)).exists() and said[-1].startswith("done DroPE")
    assert layer_runs.run_drope(tmp_path, say=said.append) == first and calls == [3e-3]  # stored and current
    stale = text_runs.load_results(layer_runs.drope_file(tmp_path)) | {"code_version": "0" * 16}
    text_runs.save_results(stale, layer_runs.drope_file(tmp_path))
    layer_runs.run_drope(tmp_path, say=said.append)
    assert calls == [3e-3, 3e-3]  # stale: made again


def test_run_all_trains_the_plans_at_the_chapters_settings(monkeypatch):
    seen = {}
    monkeypatch.setattr(text_runs, "run_all", lambda folder, **kw: seen.update(kw, folder=folder) or "collected")
    assert layer_runs.run_all("somewhere", say=print, steps=7) == "collected"
    assert seen["final"] == layer_runs.FINAL and seen["n_layers"] == 4 and seen["steps"] == 7
    assert seen["folder"] == "somewhere"


def test_layer_plans_refuse_what_they_cannot_build():
    with pytest.raises(ValueError, match="needs n_layers >= 4, got n_layers=3"):
        tf.layer_plan("swa-rope+nope", 3)
    with pytest.raises(ValueError, match="needs a causal task"):
        tf.position_inputs("rope+nope", 4, d_model=8, n_heads=1, causal=False, max_len=4, n_layers=4)
