"""`make experiments`: the trained runs on real text that chapter 20 reads, stored in notebooks/results/.

First a per-encoding learning-rate search (text_runs.settings_search: one model per encoding and rate of
text_runs.LEARNING_RATES, seed 100, scored on validation text), then every encoding with the shared settings
of text_runs.SETTINGS, the rate its search chose and seeds 0, 1, 2, scored at L, 2L, 4L and 8L on the
held-out text (text_runs.text_experiment). Writes 20_on_real_text.json (results, the search, the rate each
encoding used, settings, code version) and 20_on_real_text_models.npz (the seed-0 model of every encoding,
about 140 kB each). Takes minutes.
"""

import argparse
import pathlib
import time

from pe_lib.trained import text_runs

ENCODINGS = ("none", "sinusoidal", "learned", "rope", "alibi", "t5")
# the seed-0 model of every encoding: the chapter probes NoPE and looks at the learned table, and checks that need
# no training (T5 clamped to its trained buckets, RoPE with far keys hidden) can be re-run on each scheme (issue 27)
SAVED_MODELS = ENCODINGS
OUT = pathlib.Path(__file__).resolve().parent.parent / "notebooks" / "results"


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()  # --help; no options
    start = time.time()
    search = text_runs.settings_search(ENCODINGS, progress=False)
    print(f"search ({time.time() - start:.0f} s):", search, "->", text_runs.best_rates(search), flush=True)
    results, models = text_runs.text_experiment(ENCODINGS, search, progress=False)
    OUT.mkdir(exist_ok=True)
    text_runs.save_results(results, OUT / "20_on_real_text.json")
    text_runs.save_models([models[e][0] for e in SAVED_MODELS], OUT / "20_on_real_text_models.npz")
    print(f"done in {time.time() - start:.0f} s: {OUT}", flush=True)


if __name__ == "__main__":
    main()
