"""The summary `make mutate` prints: per module, how many mutants the unit tests killed, and every
mutant that lived, read straight from mutmut's result files (``mutants/**/*.py.meta``).

``mutmut results --all true`` gives the same list but took minutes on this machine once many modules
had been run; reading the files takes milliseconds. The meaning of each exit code is mutmut's own
(``mutmut.stats.status_by_exit_code``), so this script runs in the venv where `make mutate` installed it.

Usage: ``python tools/mutation_summary.py [MODULE ...]`` with modules as in the Makefile's MUTATE list
(``modern.timestep``, ``_validate``); none means every module that has results.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KILLED = ("killed", "timeout", "caught by type check")


def module_of(meta: Path, mutants: Path) -> str:
    """``mutants/pe_lib/modern/grid.py.meta`` -> ``modern.grid``."""
    parts = meta.relative_to(mutants / "pe_lib").with_suffix("").with_suffix("").parts
    return ".".join(parts)


def summarize(metas: Iterable[Path], mutants: Path, status_of: Callable[[int | None], str],
              modules: set[str] | None = None) -> tuple[dict[str, tuple[int, int]], list[str]]:
    """Per module (killed, checked) and the lines ``status: mutant`` of every mutant not killed.
    Mutants not yet checked are left out of both."""
    counts: dict[str, tuple[int, int]] = {}
    lived: list[str] = []
    for meta in sorted(metas):
        module = module_of(meta, mutants)
        if modules and module not in modules:
            continue
        codes = json.loads(meta.read_text())["exit_code_by_key"]
        killed = checked = 0
        for name, code in sorted(codes.items()):
            status = status_of(code)
            if status == "not checked":
                continue
            checked += 1
            if status in KILLED:
                killed += 1
            else:
                lived.append(f"  {status}: {name}")
        if checked:
            counts[module] = (killed, checked)
    return counts, lived


def main(argv: list[str]) -> int:
    from mutmut.stats import status_by_exit_code

    mutants = ROOT / "mutants"
    counts, lived = summarize(mutants.glob("pe_lib/**/*.py.meta"), mutants, status_by_exit_code.__getitem__,
                              set(argv) or None)
    print("\n".join(lived))
    for module, (killed, checked) in counts.items():
        print(f"{module:28s} {killed:4d} of {checked:4d} mutants killed ({100 * killed / checked:.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
