"""`make experiments`: the trained runs on real text that chapter 20 reads, stored in notebooks/results/.

Resumable (issue 27): every configuration is stored in notebooks/results/20_on_real_text/ as soon as it finishes,
with the code version and its settings; a re-run skips what is stored and current and redoes what is stale
(text_runs.run_all). First a per-encoding learning-rate search (one model per encoding and rate, seed 100,
text_runs.SEARCH_STEPS steps, scored on validation text; the grid is extended past a corner), then every
encoding with the shared settings of text_runs.SETTINGS, the rate its search chose and seeds 0, 1, 2, scored at
L, 2L, 4L and 8L on the held-out text, with the loss at each position of the 8L windows and the interventions;
then RoPE with head width 8 and 32 (the d_k control). The seed-0 model of each encoding is stored beside its
results (final_<encoding>_seed0.npz). Then the same protocol at two more widths (scale_runs.WIDTHS: no encoding,
ALiBi and RoPE, into d_model_<width>/) and at four times the budget (scale_runs.BUDGET_SETTINGS: the six schemes,
into budget/). A progress line after each configuration gives the elapsed time and an estimate of the time left.
"""

import argparse
import pathlib
import time

from pe_lib.trained import scale_runs, text_runs

OUT = pathlib.Path(__file__).resolve().parent.parent / "notebooks" / "results" / "20_on_real_text"


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()  # --help; no options
    start = time.time()
    def say(line):
        print(line, flush=True)

    results = text_runs.run_all(OUT, say=say)
    print("rates chosen:", results["learning_rates"], flush=True)
    for d_model in scale_runs.WIDTHS:
        print(f"-- d_model {d_model}", flush=True)
        results = scale_runs.run_width(scale_runs.width_folder(OUT, d_model), d_model, say=say)
        print("rates chosen:", results["learning_rates"], flush=True)
    print(f"-- {scale_runs.BUDGET} times the budget", flush=True)
    results = scale_runs.run_budget(OUT / "budget", say=say)
    print("rates chosen:", results["learning_rates"], flush=True)
    print(f"done in {time.time() - start:.0f} s: {OUT}", flush=True)


if __name__ == "__main__":
    main()
