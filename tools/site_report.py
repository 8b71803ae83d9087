"""How big is the built website, and what makes it heavy?

Usage: ``python tools/site_report.py [_build/html] [--top N]``. Prints the total size on disk, the
size by part of the site (pages, figures, MathJax, theme, notebook downloads, search index), the
heaviest pages (the HTML plus the figures it shows; the theme and MathJax are shared and cached),
the heaviest files, and every figure with its pixel size, flagging any above ``FIGURE_BUDGET_KB``.
Every number is measured from the files; ``make book`` runs it after the build.
"""

from __future__ import annotations

import argparse
import struct
import sys
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

FIGURE_BUDGET_KB = 150  # each figure well under this (see the common brief for chapter authors)
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp"}

PARTS = [  # (label, predicate on the path relative to the site root), first match wins
    ("MathJax (offline copy)", lambda p: p.parts[:2] == ("_static", "mathjax")),
    ("figures (_images)", lambda p: p.parts[0] == "_images"),
    ("downloads (_sources)", lambda p: p.parts[0] == "_sources"),
    ("theme, fonts and scripts (_static)", lambda p: p.parts[0] == "_static"),
    ("search index", lambda p: p.name in {"searchindex.js", "objects.inv"}),
    ("HTML pages", lambda p: p.suffix == ".html"),
    ("other", lambda p: True),
]


class _ImageSources(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.sources: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            src = dict(attrs).get("src")
            if src:
                self.sources.append(src)


def image_sources(html: str) -> list[str]:
    """The ``src`` of every ``<img>`` in an HTML document, in order."""
    parser = _ImageSources()
    parser.feed(html)
    return parser.sources


def png_size(path: Path) -> tuple[int, int] | None:
    """(width, height) in pixels read from a PNG header, or None if the file is not a PNG."""
    with path.open("rb") as handle:
        head = handle.read(24)
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return struct.unpack(">II", head[16:24])


@dataclass
class Page:
    path: str
    html_bytes: int
    image_bytes: int
    images: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.html_bytes + self.image_bytes


@dataclass
class Figure:
    path: str
    size: int
    pixels: tuple[int, int] | None


@dataclass
class Report:
    root: Path
    total: int
    files: int
    parts: dict[str, int]
    pages: list[Page]
    heaviest_files: list[tuple[str, int]]
    figures: list[Figure]

    def over_budget(self, budget_kb: float = FIGURE_BUDGET_KB) -> list[Figure]:
        return [f for f in self.figures if f.size > budget_kb * 1024]


def collect(root: Path) -> Report:
    """Measure the built site under ``root`` (the folder holding ``index.html``)."""
    root = Path(root)
    if not (root / "index.html").is_file():
        raise FileNotFoundError(f"no built site at {root} (expected {root / 'index.html'}); run `make book` first")
    sizes = {p.relative_to(root): p.stat().st_size for p in root.rglob("*") if p.is_file()}
    parts = {label: 0 for label, _ in PARTS}
    for rel, size in sizes.items():
        label = next(label for label, match in PARTS if match(rel))
        parts[label] += size
    pages = []
    for rel in sorted(r for r in sizes if r.suffix == ".html" and r.parts[0] != "_static"):
        html = (root / rel).read_text(encoding="utf-8", errors="replace")
        images = []
        for src in image_sources(html):
            target = urlsplit(src)
            if target.scheme or target.netloc:
                continue
            resolved = (root / rel).parent.joinpath(unquote(target.path)).resolve()
            try:
                images.append(resolved.relative_to(root.resolve()))
            except ValueError:
                continue
        unique = sorted(set(images))
        pages.append(Page(str(rel), sizes[rel], sum(sizes.get(i, 0) for i in unique), [str(i) for i in unique]))
    pages.sort(key=lambda p: (-p.total, p.path))
    figures = [
        Figure(str(rel), size, png_size(root / rel))
        for rel, size in sorted(sizes.items())
        if rel.parts[0] == "_images" and rel.suffix.lower() in IMAGE_SUFFIXES
    ]
    heaviest = sorted(((str(r), s) for r, s in sizes.items()), key=lambda t: (-t[1], t[0]))
    return Report(root, sum(sizes.values()), len(sizes), parts, pages, heaviest, figures)


def human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def format_report(report: Report, top: int = 8) -> str:
    lines = [f"Site report for {report.root}", f"  total on disk: {human(report.total)} in {report.files} files", ""]
    lines.append("  by part of the site:")
    for label, size in sorted(report.parts.items(), key=lambda t: -t[1]):
        if size:
            lines.append(f"    {human(size):>10}  {label}")
    lines += ["", f"  heaviest pages (HTML + its figures; shared theme and MathJax not counted), top {top}:"]
    for page in report.pages[:top]:
        lines.append(f"    {human(page.total):>10}  {page.path}  ({human(page.html_bytes)} HTML, "
                     f"{len(page.images)} figure(s) {human(page.image_bytes)})")
    lines += ["", f"  heaviest files, top {top}:"]
    for path, size in report.heaviest_files[:top]:
        lines.append(f"    {human(size):>10}  {path}")
    lines += ["", f"  figures: {len(report.figures)}, {human(sum(f.size for f in report.figures))} in all"
              f" (budget {FIGURE_BUDGET_KB} KB each)"]
    for fig in sorted(report.figures, key=lambda f: -f.size)[:top]:
        pixels = f"{fig.pixels[0]}x{fig.pixels[1]} px" if fig.pixels else "not PNG"
        flag = "  <-- OVER BUDGET" if fig.size > FIGURE_BUDGET_KB * 1024 else ""
        lines.append(f"    {human(fig.size):>10}  {pixels:>14}  {fig.path}{flag}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("html", nargs="?", default="_build/html", help="the built site (default: _build/html)")
    parser.add_argument("--top", type=int, default=8, help="how many pages/files/figures to list")
    args = parser.parse_args(argv)
    try:
        report = collect(Path(args.html))
    except FileNotFoundError as err:
        print(err, file=sys.stderr)
        return 2
    print(format_report(report, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
