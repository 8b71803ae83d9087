"""`make experiments`: the trained runs on real text that chapter 20 reads, stored in notebooks/results/.

1. A settings search: for each encoding, one model (seed 100) per learning rate of
   pe_lib.trained.text_runs.LEARNING_RATES, scored on validation text; the best rate per encoding.
2. The runs: every encoding with its best rate and seeds 0, 1, 2, scored at L, 2L, 4L and 8L on the test
   part of the held-out text (pe_lib.trained.text_runs.text_experiment).
Writes 20_on_real_text.json (results, search, settings, code version) and 20_on_real_text_models.npz
(the seed-0 models of the encodings the chapter looks inside). Takes minutes; prints as it goes.
"""

import pathlib
import sys
import time

from pe_lib.trained import text_runs

ENCODINGS = ("none", "sinusoidal", "learned", "rope", "alibi")
SAVED_MODELS = ("none", "learned")  # the chapter probes NoPE and looks at the learned table
OUT = pathlib.Path(__file__).resolve().parent.parent / "notebooks" / "results"


def main() -> None:
    start = time.time()
    search = text_runs.settings_search(ENCODINGS, progress=False)
    rates = text_runs.best_rates(search)
    print(f"search ({time.time() - start:.0f} s):", search, "->", rates, flush=True)
    results, models = text_runs.text_experiment(ENCODINGS, learning_rates=rates, progress=False)
    results["search"] = search
    OUT.mkdir(exist_ok=True)
    text_runs.save_results(results, OUT / "20_on_real_text.json")
    text_runs.save_models([models[e][0] for e in SAVED_MODELS], OUT / "20_on_real_text_models.npz")
    print(f"done in {time.time() - start:.0f} s: {OUT}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
