"""`make experiments`: the trained runs chapter 21 reads, stored in notebooks/results/21_layers/.

Resumable, as tools/text_experiments.py: every configuration is stored as soon as it finishes, with the code
version and its settings, and a re-run skips what is stored and current. First chapter 20's protocol for the
schemes that differ from layer to layer (layer_runs.FINAL at layer_runs.SETTINGS: a learning-rate search per
scheme, then seeds 0, 1, 2 scored at L to 8L with the per-position loss and the "hide far keys" mask), then
DroPE, PI and YaRN on the RoPE models (layer_runs.drope_cell). A progress line after each configuration gives
the elapsed time and an estimate of the time left.
"""

import argparse
import pathlib
import time

from pe_lib.trained import layer_runs

OUT = pathlib.Path(__file__).resolve().parent.parent / "notebooks" / "results" / "21_layers"


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()  # --help; no options
    start = time.time()
    results = layer_runs.run_all(OUT, say=lambda line: print(line, flush=True))
    print("rates chosen:", results["learning_rates"], flush=True)
    layer_runs.run_drope(OUT, say=lambda line: print(line, flush=True))
    print(f"done in {time.time() - start:.0f} s: {OUT}", flush=True)


if __name__ == "__main__":
    main()
