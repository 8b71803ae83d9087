"""The learner's surface: a chapter opened in a real JupyterLab (the locked `make lab` environment) in Chromium.

JupyterLab ignores Jupyter Book's markup and tags, so without care a learner sees raw ``{term}`...```
roles and every exercise solution open under its question. These tests start the JupyterLab of
``requirements-lab.txt`` (with jupyterlab-myst) on 127.0.0.1 and look at what it renders.
"""

from __future__ import annotations

import importlib.util
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest
from site_helpers import ROOT

CHAPTER = "notebooks/03_the_formula.ipynb"
RAW_MARKUP = ("{term}`", "{cite}`", "{doc}`", ":filter:", "```{", "{bibliography}")
pytestmark = pytest.mark.browser


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _settings(folder: Path) -> None:
    """Lab settings for the test only: render every cell (no windowing), never ask for news."""
    for name, value in {
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false"},
    }.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """Base URL and token of a JupyterLab serving the repository root."""
    if importlib.util.find_spec("jupyterlab_myst") is None or importlib.util.find_spec("jupyterlab") is None:
        message = "JupyterLab with jupyterlab-myst is not installed (make lab-venv installs requirements-lab.txt)"
        if os.environ.get("REQUIRE_BROWSER", "0") == "1":
            pytest.fail(message, pytrace=False)
        pytest.skip(f"LAB TEST NOT RUN: {message}")
    tmp = tmp_path_factory.mktemp("lab")
    _settings(tmp / "settings")
    port, token = _free_port(), secrets.token_hex(16)
    env = os.environ | {"JUPYTERLAB_SETTINGS_DIR": str(tmp / "settings"), "JUPYTERLAB_WORKSPACES_DIR": str(tmp)}
    cmd = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", f"--port={port}", "--ip=127.0.0.1",
        f"--ServerApp.token={token}", f"--ServerApp.root_dir={ROOT}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if proc.poll() is not None:
                    pytest.fail(f"JupyterLab exited: {proc.stderr.read()[-2000:]}", pytrace=False)
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not answer within 60 s", pytrace=False)
        yield url, token
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:  # pragma: no cover - only if the server hangs
            proc.kill()


@pytest.fixture(scope="module")
def chapter_page(browser, lab, book_html):
    url, token = lab
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    page = context.new_page()
    page.goto(f"{url}/lab/tree/{CHAPTER}?reset&token={token}")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
    n_cells = len(nbformat.read(ROOT / CHAPTER, as_version=4).cells)
    page.wait_for_function(f"document.querySelectorAll('.jp-Notebook .jp-Cell').length >= {n_cells}", timeout=60_000)
    # jupyterlab-myst renders markdown asynchronously: wait until the roles have become links
    try:
        page.wait_for_function("document.querySelectorAll('.jp-MarkdownCell a').length >= 3", timeout=60_000)
    except Exception:  # noqa: BLE001 - the test below reports what is (not) there
        pass
    page.screenshot(path=str(book_html.parent / "lab-chapter.png"))
    yield page
    context.close()


def test_lab_renders_the_book_markup_instead_of_showing_it(chapter_page):
    text = chapter_page.inner_text(".jp-Notebook")
    raw = {needle: text.count(needle) for needle in RAW_MARKUP if needle in text}
    assert not raw, f"JupyterLab shows raw Jupyter Book markup in {CHAPTER}: {raw}"
    links = chapter_page.locator(".jp-MarkdownCell a").count()
    assert links >= 3, f"only {links} links rendered in the markdown of {CHAPTER} ({{term}} and {{doc}} roles)"


def test_lab_collapses_what_the_book_hides(chapter_page):
    nb = nbformat.read(ROOT / CHAPTER, as_version=4)
    hidden_in_book = sum("hide-input" in c.metadata.get("tags", []) for c in nb.cells)
    assert hidden_in_book >= 2, "the chapter has exercise solutions tagged hide-input"
    collapsed = chapter_page.locator(".jp-Notebook .jp-InputPlaceholder").count()
    assert collapsed == hidden_in_book, (
        f"{hidden_in_book} cells are hidden on the website (hide-input) but {collapsed} are collapsed in Lab"
    )
