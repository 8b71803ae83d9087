"""Helpers shared by the website tests (kept out of conftest.py so test modules can import them)."""

from __future__ import annotations

import http.server
import threading
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def toc_docnames(toc_path: Path = ROOT / "_toc.yml") -> list[str]:
    """Every page of the table of contents, in reading order (root first), e.g. ``book/intro``."""
    toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))
    names = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                names.append(entry["file"])
            walk(entry.get("sections"))
            walk(entry.get("chapters"))

    walk(toc.get("parts"))
    walk(toc.get("chapters"))
    return [n.removesuffix(".ipynb").removesuffix(".md") for n in names]


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Static files, quietly; every answer is fresh (no 304), so each load really fetches."""

    def do_GET(self):
        del self.headers["If-Modified-Since"]
        super().do_GET()

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


@contextmanager
def serve(directory: Path):
    """Serve ``directory`` on 127.0.0.1 on a free port from a thread; yields the base URL (ending in /)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
