"""`make experiments`: the trained runs on real text that chapter 20 reads, stored in notebooks/results/.

Every encoding with the settings of pe_lib.trained.text_runs.SETTINGS (one learning rate for all) and seeds
0, 1, 2, scored at L, 2L, 4L and 8L on the held-out text (text_runs.text_experiment). With --search, first a
per-encoding learning-rate search (text_runs.settings_search: one model per rate, seed 100, scored on
validation text) whose best rate each encoding then uses; it roughly doubles the time and was not run for
the stored results. Writes 20_on_real_text.json (results, settings, code version) and
20_on_real_text_models.npz (the seed-0 models of the encodings the chapter looks inside). Takes minutes.
"""

import argparse
import pathlib
import time

from pe_lib.trained import text_runs

ENCODINGS = ("none", "sinusoidal", "learned", "rope", "alibi", "t5")
SAVED_MODELS = ("none", "learned")  # the chapter probes NoPE and looks at the learned table
OUT = pathlib.Path(__file__).resolve().parent.parent / "notebooks" / "results"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--search", action="store_true", help="search the learning rate per encoding first")
    args = parser.parse_args()
    start = time.time()
    rates, search = None, None
    if args.search:
        search = text_runs.settings_search(ENCODINGS, progress=False)
        rates = text_runs.best_rates(search)
        print(f"search ({time.time() - start:.0f} s):", search, "->", rates, flush=True)
    results, models = text_runs.text_experiment(ENCODINGS, learning_rates=rates, progress=False)
    if search is not None:
        results["search"] = search
    OUT.mkdir(exist_ok=True)
    text_runs.save_results(results, OUT / "20_on_real_text.json")
    text_runs.save_models([models[e][0] for e in SAVED_MODELS], OUT / "20_on_real_text_models.npz")
    print(f"done in {time.time() - start:.0f} s: {OUT}", flush=True)


if __name__ == "__main__":
    main()
