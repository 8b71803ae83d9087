"""Chapter 20's re-tests at four times the budget and at two more widths (pe_lib.trained.scale_runs): the stored
runs are current, follow the protocol (rates inside the grid) and one of each is trained again from scratch; the
order and gap helpers against hand-made results."""

import pathlib

import numpy as np
import pytest

from pe_lib.trained import scale_runs, text_runs

STORED = pathlib.Path(__file__).resolve().parents[2] / "notebooks" / "results" / "20_on_real_text"
FOLDERS = {"budget": STORED / "budget", **{f"d_model {d}": pathlib.Path(scale_runs.width_folder(STORED, d))
                                           for d in scale_runs.WIDTHS}}


def _expected_settings(name: str) -> tuple[dict, dict, tuple]:
    """(the settings of its search cells, of its final cells, its final configurations) for a stored folder."""
    if name == "budget":
        final = scale_runs.BUDGET_SETTINGS
        return final | {"steps": scale_runs.BUDGET_SEARCH_STEPS}, final, scale_runs.BUDGET_FINAL
    final = scale_runs.width_settings(int(name.split()[1]))
    return final | {"steps": text_runs.SEARCH_STEPS}, final, scale_runs.WIDTH_FINAL


@pytest.mark.parametrize("name", list(FOLDERS))
def test_every_stored_run_is_current_and_follows_the_protocol(name):
    folder = FOLDERS[name]
    cells = [text_runs.load_results(p) for p in sorted(folder.glob("*.json"))]
    assert cells, f"no stored runs in {folder}: run make experiments"
    search_settings, final_settings, final = _expected_settings(name)
    for cell in cells:
        assert cell["code_version"] == text_runs.code_version(), f"{name}: stale, run make experiments"
        assert cell["settings"] == (search_settings if cell["kind"] == "search" else final_settings), cell
    out = text_runs.collect(folder)
    assert sorted(out["final"]) == sorted(n for n, _, _ in final)
    for encoding, scores in out["search"].items():  # the best rate with a worse one tried on either side
        rates, best = sorted(map(float, scores)), out["learning_rates"][encoding]
        assert rates[0] < best < rates[-1], (name, encoding, rates, best)
        assert out["final"][encoding]["learning_rate"] == best and out["final"][encoding]["seeds"] == [0, 1, 2]


@pytest.mark.parametrize("name", list(FOLDERS))
def test_one_stored_configuration_of_each_again_from_scratch(name):
    # the first point (100 steps) of the learning curve of the search cell of the rate ALiBi chose, trained again
    out = text_runs.collect(FOLDERS[name])
    rate = out["learning_rates"]["alibi"]
    curve = out["search_curves"]["alibi"][str(rate)]
    first = min(curve, key=int)
    search_settings, _, _ = _expected_settings(name)
    again = text_runs.search_cell("alibi", rate, **(search_settings | {"steps": int(first)}))
    assert again["curve"][first] == pytest.approx(curve[first], abs=1e-9)


def _final(curves: dict, bpc_at_l: dict | None = None) -> dict:
    """Hand-made final configurations: ``{name: {steps: mean bpc}}`` as three equal seeds."""
    return {name: {"curve": {str(n): [v] * 3 for n, v in points.items()},
                   "bpc": [[(bpc_at_l or {}).get(name, 0.0)]] * 3} for name, points in curves.items()}


def test_orders_and_where_they_settle():
    final = _final({"a": {100: 3.0, 200: 2.5, 300: 2.0, 400: 1.9},
                    "b": {100: 2.9, 200: 2.6, 300: 2.4, 400: 2.0},
                    "c": {100: 3.1, 200: 2.4, 300: 2.6, 400: 2.5}})
    assert scale_runs.orders(final) == {100: ["b", "a", "c"], 200: ["c", "a", "b"], 300: ["a", "b", "c"],
                                        400: ["a", "b", "c"]}
    assert scale_runs.settled_from(final) == 300
    steady = _final({"a": {100: 2.0, 200: 1.0}, "b": {100: 3.0, 200: 2.0}})
    assert scale_runs.settled_from(steady) == 100  # the same order at every checkpoint: settled from the first
    final["c"]["curve"]["300"] = [2.3] * 3  # c ahead of b at 300: the order of the end holds only at 400
    assert scale_runs.settled_from(final) == 400
    del final["c"]["curve"]["400"]  # only the checkpoints every configuration has are compared
    assert sorted(scale_runs.orders(final)) == [100, 200, 300]
    with pytest.raises(ValueError, match="final is empty"):
        scale_runs.orders({})


def test_order_changes_name_the_pairs_that_swap_after_a_step():
    final = _final({"a": {100: 3.0, 200: 2.5, 300: 2.0, 400: 1.9},
                    "b": {100: 2.9, 200: 2.6, 300: 2.4, 400: 2.0},
                    "c": {100: 3.1, 200: 2.4, 300: 2.3, 400: 2.5}})
    # the end: a < b < c; at 300 c is ahead of b; at 200 c is ahead of a and b, at 100 b is ahead of a
    assert scale_runs.order_changes(final, 400) == []
    assert scale_runs.order_changes(final, 300) == [("b", "c")]
    assert scale_runs.order_changes(final, 200) == [("a", "c"), ("b", "c")]
    assert scale_runs.order_changes(final, 100) == [("a", "b"), ("a", "c"), ("b", "c")]
    with pytest.raises(ValueError, match="since must be an integer >= 1, got 0"):
        scale_runs.order_changes(final, 0)


def test_nope_gaps_are_none_minus_the_other_seed_by_seed():
    final = {"none": {"bpc": [[3.2, 9], [3.3, 9], [3.1, 9]]}, "alibi": {"bpc": [[2.2, 0], [2.0, 0], [2.4, 0]]}}
    np.testing.assert_allclose(scale_runs.nope_gaps(final), [1.0, 1.3, 0.7])
    with pytest.raises(ValueError, match=r"no stored configuration 'rope'; stored: \['alibi', 'none'\]"):
        scale_runs.nope_gaps(final, against="rope")


def test_widths_keep_the_head_width_and_refuse_what_cannot():
    assert scale_runs.width_settings(128) == text_runs.SETTINGS | {"d_model": 128, "n_heads": 8}
    assert scale_runs.width_settings(64) == text_runs.SETTINGS  # chapter 20's own width
    with pytest.raises(ValueError, match="multiple of the head width 16, got 40"):
        scale_runs.width_settings(40)
    with pytest.raises(ValueError, match="d_model must be an integer >= 1, got 0"):
        scale_runs.width_settings(0)
    assert scale_runs.width_folder("r", 32).endswith("d_model_32")


def test_the_experiments_call_chapter_20s_protocol_with_their_settings(monkeypatch):
    calls = []
    monkeypatch.setattr(text_runs, "run_all", lambda folder, **kw: calls.append((folder, kw)) or "collected")
    assert scale_runs.run_budget("b", say=None) == "collected"
    assert scale_runs.run_width("w", 32, say=None) == "collected"
    (_, budget), (_, width) = calls
    assert budget["steps"] == 1600 and budget["search_steps"] == 400 and len(budget["final"]) == 6
    assert {k: width[k] for k in ("d_model", "n_heads", "steps")} == {"d_model": 32, "n_heads": 2, "steps": 400}
    assert [name for name, _, _ in width["final"]] == ["none", "alibi", "rope"]
