"""`make mutate` covers every module that computes: a new module cannot slip out of mutation testing.

The modules are those of pe_lib except the drawing (drawing/), the display helpers (book/figures.py,
book/_progress.py), book/machine.py (a setting, no function) and the subpackages' ``__init__``
files. Each must be matched by ``only_mutate`` in
pyproject.toml's ``[tool.mutmut]`` and named in the Makefile's ``MUTATE`` list.
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOT_COMPUTING = {"pe_lib/book/figures.py", "pe_lib/book/_progress.py", "pe_lib/book/machine.py"}  # display, settings


def computing_modules() -> list[str]:
    files = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "pe_lib").rglob("*.py"))
    return [f for f in files if not f.startswith("pe_lib/drawing/") and Path(f).name != "__init__.py"
            and f not in NOT_COMPUTING]  # fmt: skip


def makefile_mutate() -> set[str]:
    """The modules of the Makefile's MUTATE default, as dotted names below pe_lib."""
    text = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    variables = dict(re.findall(r"^(MUTATE\w*)\s*[:?]?=\s*(.*)$", text, re.M))

    def expand(value: str) -> list[str]:
        words = value.split()
        return [w for part in words for w in (expand(variables[part[2:-1]]) if part.startswith("$(") else [part])]

    return set(expand(variables["MUTATE"]))


def test_every_computing_module_is_mutated():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]
    modules = computing_modules()
    assert len(modules) >= 33
    unmatched = [m for m in modules if not any(fnmatch.fnmatch(m, g) for g in config["only_mutate"])]
    excluded = [m for m in modules if any(fnmatch.fnmatch(m, g) for g in config.get("do_not_mutate", []))]
    assert not unmatched and not excluded, f"not mutated by [tool.mutmut]: {unmatched + excluded}"
    dotted = {m.removeprefix("pe_lib/").removesuffix(".py").replace("/", ".") for m in modules}
    assert makefile_mutate() == dotted, (
        f"the Makefile's MUTATE misses {sorted(dotted - makefile_mutate())} "
        f"and names {sorted(makefile_mutate() - dotted)}, which do not exist"
    )


def test_the_check_sees_a_missing_module():
    assert "encodings.hands" in makefile_mutate()
    assert {"encodings/hands.py"} <= {m.removeprefix("pe_lib/") for m in computing_modules()}
    assert not any(m.startswith("pe_lib/drawing/") for m in computing_modules())


# ---- tools/mutation_summary.py: what `make mutate` prints, read from mutmut's result files ---------
def test_the_summary_counts_kills_and_lists_every_mutant_that_lived(tmp_path):
    import json
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import mutation_summary

    mutants = tmp_path / "mutants"
    (mutants / "pe_lib" / "modern").mkdir(parents=True)
    codes = {"grid.x_a__mutmut_1": 1, "grid.x_a__mutmut_2": 0, "grid.x_a__mutmut_3": -24, "grid.x_a__mutmut_4": None,
             "grid.x_a__mutmut_5": 33}
    (mutants / "pe_lib" / "modern" / "grid.py.meta").write_text(json.dumps({"exit_code_by_key": codes}))
    (mutants / "pe_lib" / "_validate.py.meta").write_text(json.dumps({"exit_code_by_key": {"v__mutmut_1": 1}}))
    # mutmut's meaning of these exit codes (mutmut.stats.status_by_exit_code), written out by hand
    status = {1: "killed", 0: "survived", -24: "timeout", None: "not checked", 33: "no tests"}.__getitem__
    metas = mutants.glob("pe_lib/**/*.py.meta")
    counts, lived = mutation_summary.summarize(metas, mutants, status)
    assert counts == {"_validate": (1, 1), "modern.grid": (2, 4)}  # a timeout is a kill; not checked: not counted
    assert lived == ["  survived: grid.x_a__mutmut_2", "  no tests: grid.x_a__mutmut_5"]
    counts, _ = mutation_summary.summarize(mutants.glob("pe_lib/**/*.py.meta"), mutants, status, {"_validate"})
    assert counts == {"_validate": (1, 1)}
