"""Two clean builds of the site must give identical HTML for every page (not run by ``make test``:
two builds take minutes). Usage::

    python tests/benchmarks/reproducible_build.py          # snapshots the sources, builds them twice
    python tests/benchmarks/reproducible_build.py A B      # compares two existing _build/html folders

Known build noise is removed before comparing (none is expected: the theme prints no build date);
every other difference is reported with the first differing lines, and the exit status is 1.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Patterns of legitimate per-build noise. Sphinx adds `?v=<hash>` to static assets; the hash is
# the file's content, so it is stable and kept. A build date would be listed here if the theme showed one.
NOISE = [re.compile(r"Last updated on [^<]*")]


def snapshot(dest: Path) -> Path:
    """Copy the sources once, so that both builds see the same files even while the tree is edited."""
    skip = shutil.ignore_patterns(".venv", "_build", ".git", ".hypothesis", ".pytest_cache", ".ruff_cache",
                                  "node_modules", "authoring", "__pycache__")
    shutil.copytree(ROOT, dest, ignore=skip)
    return dest


def build(src: Path, out: Path) -> Path:
    """The clean build of ``make book`` (same command and flags), of the sources in ``src``."""
    env = os.environ | {"PYTHONHASHSEED": "0", "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
    cmd = [str(ROOT / ".venv" / "bin" / "jupyter-book"), "build", str(src), "--builder", "html",
           "--path-output", str(out), "-W", "-n", "--keep-going"]
    proc = subprocess.run(cmd, cwd=src, env=env, capture_output=True, text=True, check=False)
    html = out / "_build" / "html"
    if proc.returncode != 0:  # -W turns warnings into a failure, but --keep-going still writes every page
        warnings = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "WARNING" in ln]
        print(f"note: the build into {out} reported {len(warnings)} warning(s); comparing its pages anyway")
        if not (html / "index.html").exists():
            sys.exit(f"build into {out} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return html


def normalized(path: Path) -> list[str]:
    text = path.read_text(errors="replace")
    for pattern in NOISE:
        text = pattern.sub("", text)
    return text.splitlines()


def compare(a: Path, b: Path) -> list[str]:
    """Relative paths of HTML pages that differ (or exist in one build only), with a short diff each."""
    problems = []
    pages_a = {p.relative_to(a) for p in a.rglob("*.html")}
    pages_b = {p.relative_to(b) for p in b.rglob("*.html")}
    for rel in sorted(pages_a ^ pages_b):
        problems.append(f"{rel}: only in one build")
    for rel in sorted(pages_a & pages_b):
        lines_a, lines_b = normalized(a / rel), normalized(b / rel)
        if lines_a != lines_b:
            diff = list(difflib.unified_diff(lines_a, lines_b, lineterm="", n=0))[2:8]
            problems.append(f"{rel}: differs\n    " + "\n    ".join(line[:200] for line in diff))
    return problems


def main(argv: list[str]) -> int:
    if len(argv) == 2:
        a, b = Path(argv[0]), Path(argv[1])
        problems = compare(a, b)
    else:
        with tempfile.TemporaryDirectory(prefix="pe-repro-") as tmp:
            src = snapshot(Path(tmp) / "src")
            a, b = build(src, Path(tmp) / "one"), build(src, Path(tmp) / "two")
            problems = compare(a, b)
            count = len(list(a.rglob("*.html")))
    if problems:
        print(f"{len(problems)} page(s) differ between two clean builds:")
        print("\n".join(problems))
        return 1
    print(f"identical: every HTML page of two clean builds ({count if len(argv) != 2 else 'all'} pages)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
