"""`make experiments` (second part): the robustness sweep of chapters 14 and 15, stored in notebooks/results/.

Trains the chapters' models again with one factor varied at a time (pe_lib.trained.sweeps.VARIANTS: one head
of width 32, eight heads of width 8; twice the steps; seeds 0 to 5) and scores them on the test sequences, then
searches the arms that fail in chapter 14 on a wider grid (sweeps.WIDER_GRID) and runs that search on to 32000
steps (bracketing.LONGER_GRID), then trains chapter 16's models
again with one factor varied at a time and measures what its findings rest on (pe_lib.trained.mechanisms). Writes
14_15_robustness.json (the sweep, with the code version), 14_wider_search.json, 14_longer_search.json and
16_mechanisms.json. Takes
about an hour on one core (the search run on to 32000 steps: about 25 minutes).
"""

import argparse
import pathlib
import time

from pe_lib.trained import bracketing, mechanisms, sweeps

OUT = pathlib.Path(__file__).resolve().parent.parent / "notebooks" / "results"


def log(text: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {text}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("sweep", "search", "longer", "mechanisms"), help="run one of the parts")
    only = parser.parse_args().only
    start = time.time()
    OUT.mkdir(exist_ok=True)
    if only in (None, "sweep"):
        results = sweeps.robustness_sweep(progress=False, log=log)
        sweeps.save_results(results, OUT / "14_15_robustness.json")
        print(f"sweep done in {time.time() - start:.0f} s", flush=True)
    if only in (None, "search"):
        search = sweeps.wider_search(progress=False, log=log)
        stored = {"code_version": sweeps.code_version(), "grid": sweeps.WIDER_GRID, "arms": search}
        sweeps.save_results(stored, OUT / "14_wider_search.json")
        print(f"search done in {time.time() - start:.0f} s", flush=True)
    if only in (None, "longer"):
        longer = bracketing.longer_search(progress=False, log=log)
        sweeps.save_results(longer, OUT / "14_longer_search.json")
        print(f"longer search done in {time.time() - start:.0f} s", flush=True)
    if only in (None, "mechanisms"):
        found = mechanisms.mechanism_sweep(progress=False, log=log)
        sweeps.save_results(found, OUT / "16_mechanisms.json")
        print(f"mechanisms done in {time.time() - start:.0f} s", flush=True)


if __name__ == "__main__":
    main()
