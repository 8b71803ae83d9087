"""The search of chapter 14's failing schemes run on to 32000 steps (pe_lib.trained.bracketing): its layout on a
tiny run, the stored result comes from the current code and continues the stored wider search, and one of its
configurations trained again from scratch gives the stored numbers."""

import pathlib

import pytest

from pe_lib.trained import bracketing, sweeps

RESULTS = pathlib.Path(__file__).resolve().parents[2] / "notebooks" / "results"
LONGER = RESULTS / "14_longer_search.json"
WIDER = RESULTS / "14_wider_search.json"


@pytest.fixture(scope="module")
def stored():
    return sweeps.load_results(LONGER)


def test_a_tiny_longer_search_has_the_layout_the_chapter_reads():
    lines = []
    out = bracketing.longer_search((("lookback", "alibi", 2),), seeds=(0,), learning_rates=(1e-3,), steps=(100, 200),
                                   progress=False, log=lines.append)
    assert set(out) == {"code_version", "grid", "arms"} and out["code_version"] == bracketing.code_version()
    assert out["grid"] == {"learning_rates": [1e-3], "steps": [100, 200]} and len(lines) == 1
    assert set(out["arms"]["lookback alibi 2"]) == {"0.001 100", "0.001 200"}


def test_the_search_refuses_a_setting_it_would_ignore():
    with pytest.raises(ValueError, match=r"grid takes only \['learning_rates', 'steps'\], got \['seq_len'\]"):
        bracketing.longer_search(seq_len=6)


def test_the_grid_reaches_below_the_old_rates_and_four_times_its_steps():
    old, new = sweeps.WIDER_GRID, bracketing.LONGER_GRID
    assert min(new["learning_rates"]) < min(old["learning_rates"])
    assert max(new["steps"]) == 4 * max(old["steps"]) and set(old["steps"]) <= set(new["steps"])


def test_stored_longer_search_comes_from_the_current_code(stored):
    assert stored["code_version"] == bracketing.code_version(), (
        "the code behind notebooks/results/14_longer_search.json changed since it was stored: run make experiments")
    assert stored["grid"] == {k: list(v) for k, v in bracketing.LONGER_GRID.items()}
    assert set(stored["arms"]) == {f"{t} {e} {h}" for t, e, h in sweeps.WIDER_ARMS}
    for grid in stored["arms"].values():
        assert set(grid) == {f"{lr:g} {n}" for lr in bracketing.LONGER_GRID["learning_rates"]
                             for n in bracketing.LONGER_GRID["steps"]}


def test_its_first_readings_are_the_stored_wider_searchs(stored):
    # the same vmapped runs (one per rate, the same seeds and batches), read after up to 8000 steps
    wider = sweeps.load_results(WIDER)["arms"]
    compared = 0
    for arm, grid in stored["arms"].items():
        for key, old in wider[arm].items():
            if key in grid:
                new = grid[key]
                assert new["validation per seed"] == pytest.approx(old["validation per seed"], rel=0.02), (arm, key)
                assert new["test"] == pytest.approx(old["test"], abs=0.03), (arm, key)
                compared += 1
    assert compared == 4 * 4 * 5  # four arms, the four rates of the old grid, five numbers of steps


def test_one_stored_configuration_again_from_scratch(stored):
    # T5's bias on reverse at rate 0.01 after 500 steps, every seed, as the search trains it
    again = bracketing.longer_search((("reverse", "t5", 4),), learning_rates=(1e-2,), steps=(500,), progress=False)
    old, new = stored["arms"]["reverse t5 4"]["0.01 500"], again["arms"]["reverse t5 4"]["0.01 500"]
    assert new["validation per seed"] == pytest.approx(old["validation per seed"], rel=1e-4)
    assert new["test"] == pytest.approx(old["test"], abs=0.01)
