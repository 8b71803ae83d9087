"""Every Jupyter explorer has a working stand-in on the website, and its numbers are pe_lib's.

The chapters' widgets need a kernel, so the site removes their cells (tag ``remove-cell``). Each page
whose notebook has such a cell must offer a kernel-free control instead (a slider that redraws, see
also test_pages.py). Chapters 4 and 9 get theirs from ``_ext/static/pe_explorer.js``, which computes
the encoding in the browser; here its table and its numbers are compared with ``pe_lib`` (expected
values from pe_lib, never from the script), and moving a slider must redraw the picture.
"""

from __future__ import annotations

import re
from contextlib import contextmanager

import nbformat
import numpy as np
import pytest
from site_helpers import PHONE, ROOT, VIEWPORT, new_context, open_page, toc_docnames

import pe_lib

pytestmark = pytest.mark.browser

CHAPTERS = [d for d in toc_docnames() if d.startswith("notebooks/")]
# calls that build a Jupyter widget (a control that needs a kernel)
WIDGET_CALLS = ("_widget(", "base_explorer(", "interact(", "interactive(", "widgets.")


def widget_cells(docname: str) -> list[str]:
    nb = nbformat.read(ROOT / f"{docname}.ipynb", as_version=4)
    return [c.source for c in nb.cells if c.cell_type == "code" and "remove-cell" in c.metadata.get("tags", [])
            and any(call in c.source for call in WIDGET_CALLS)]


@contextmanager
def checked_page(browser, site, docname: str, kind: str | None = None, context=None):
    """Chapter ``docname`` loaded (with its explorer ``kind``, if given); yields ``(page, problems)``.

    The test appends what it finds wrong to ``problems``; when the block ends the page's own problems
    (HTTP errors, console errors, requests leaving the site) are added and the list must be empty.
    """
    visit = open_page(browser, site, f"{docname}.html", context=context)
    problems: list[str] = []
    try:
        if kind is not None and not visit.page.evaluate(
                f"() => document.querySelectorAll('.pe-explorer[data-explorer={kind}] canvas').length"):
            pytest.fail(f"{docname} has no {kind!r} explorer (<div class=\"pe-explorer\" data-explorer=\"{kind}\">)")
        yield visit.page, problems
        problems += visit.problems(site)
    finally:
        visit.close()
    assert not problems, problems


@pytest.mark.parametrize("docname", [d for d in CHAPTERS if widget_cells(d)])
def test_every_jupyter_explorer_has_a_kernel_free_control(browser, site, docname):
    with checked_page(browser, site, docname) as (page, problems):
        if not page.evaluate("() => document.querySelectorAll('.bd-article input[type=range]').length"):
            widget = widget_cells(docname)[0]
            problems.append(f"{docname} has a Jupyter explorer ({widget!r}) but no control on the site")


def _move(page, kind: str, name: str, value) -> dict:
    """Set slider ``name`` of the explorer to ``value`` as a reader would (an input event); return the
    explorer's state and a digest of its pictures."""
    return page.evaluate("""([kind, name, value]) => {
        const root = document.querySelector(`.pe-explorer[data-explorer=${kind}]`);
        const slider = root.querySelector(`input[name=${name}]`);
        slider.value = value;
        slider.dispatchEvent(new Event('input', {bubbles: true}));
        return {state: root.peState, pictures: Array.from(root.querySelectorAll('canvas')).map(c => c.toDataURL()),
                text: root.querySelector('.pe-explorer__numbers').textContent};
    }""", [kind, name, value])


def _close(actual: dict, expected: dict) -> list[str]:
    out = []
    for key, want in expected.items():
        got = actual.get(key)
        if isinstance(want, int):
            if got != want:
                out.append(f"{key}: browser {got}, pe_lib {want}")
        elif not (np.isnan(want) and got is None) and not np.isclose(got, want, rtol=1e-12, atol=0):
            out.append(f"{key}: browser {got!r}, pe_lib {want!r}")
    return out


def _start(page, kind: str, slider: str, value, defaults: dict, summary: dict, problems: list) -> dict:
    """Move one slider to ``value``: the explorer must show its ``defaults`` and pe_lib's ``summary``."""
    start = _move(page, kind, slider, value)
    params = start["state"]["params"]
    assert {key: params[key] for key in defaults} == defaults, params
    problems += _close(start["state"]["summary"], summary)
    return start


def test_the_table_explorer_computes_pe_libs_table(browser, site):
    with checked_page(browser, site, "notebooks/04_visualizing", "table") as (page, problems):
        start = _start(page, "table", "n_positions", 64, {"n_positions": 64, "d_model": 128, "base": 10_000},
                       pe_lib.explorer_summary(64, 128, 10_000.0), problems)
        for n, d, base in [(300, 96, 10_000.0), (512, 256, 10 ** 5.3), (7, 2, 3.5)]:
            table = np.array(page.evaluate("([n, d, b]) => Array.from(window.peExplorer.sinusoidal(n, d, b))",
                                           [n, d, base])).reshape(n, d)
            error = np.abs(table - pe_lib.sinusoidal(n, d, base=base)).max()
            if error > 1e-12:
                problems.append(f"table {n} x {d}, base {base:g}: off by {error:.2e} from pe_lib.sinusoidal")
        moved = _move(page, "table", "base", 5.3)  # the log10 of the base, as in pe_lib's FloatLogSlider
        base = moved["state"]["params"]["base"]
        # the base snaps to the 3 significant digits it shows ("12.5893" after a drag: issue 30, item 7)
        assert base == 200_000, base
        shown = page.evaluate("() => Array.from(document.querySelectorAll("
                              "'.pe-explorer[data-explorer=table] output')).map(o => o.textContent)")
        assert shown == ["64", "128", "200000"], shown
        problems += _close(moved["state"]["summary"], pe_lib.explorer_summary(64, 128, base))
        if moved["pictures"] == start["pictures"]:
            problems.append("moving the base slider did not redraw the pictures")
        info = pe_lib.explorer_summary(64, 128, base)
        if f"{info['full_turns']} of {info['pairs']} pairs" not in moved["text"]:
            problems.append(f"the numbers shown do not follow the slider: {moved['text']!r}")
        longest = _move(page, "table", "d_model", 1024)["state"]
        problems += _close(longest["summary"], pe_lib.explorer_summary(64, 1024, base))


def test_the_table_explorer_opens_on_another_setting_than_the_figure_above_it(browser, site):
    """Chapter 4 shows pe_lib.explorer_figure for one setting; the explorer under it must not repeat it
    (issue 19, item 14): it opens where its element's data-* attributes say, with pe_lib's numbers."""
    nb = nbformat.read(ROOT / "notebooks/04_visualizing.ipynb", as_version=4)
    figure = [tuple(map(int, m)) for c in nb.cells if c.cell_type == "code"
              for m in re.findall(r"explorer_figure\((\d+), (\d+), BASE\)", c.source)]
    element = [c.source for c in nb.cells if 'data-explorer="table"' in c.source]
    assert len(figure) == 1 and len(element) == 1, (figure, element)
    wanted = {name: float(v) for name, v in re.findall(r'data-(n_positions|d_model|base)="([^"]+)"', element[0])}
    with checked_page(browser, site, "notebooks/04_visualizing", "table") as (page, problems):
        state = page.evaluate("() => document.querySelector('.pe-explorer[data-explorer=table]').peState")
        params = state["params"]
        if (params["n_positions"], params["d_model"]) == figure[0]:
            problems.append(f"the explorer opens on the figure's setting {figure[0]}: it repeats the figure")
        if {k: params[k] for k in wanted} != wanted:
            problems.append(f"the explorer opens at {params}, its element asks for {wanted}")
        problems += _close(state["summary"], pe_lib.explorer_summary(int(params["n_positions"]),
                                                                     int(params["d_model"]), params["base"]))


def test_the_base_explorer_shows_pe_libs_numbers(browser, site):
    with checked_page(browser, site, "notebooks/09_why_10000", "base") as (page, problems):
        start = _start(page, "base", "length", 128, {"d_model": 512, "base": 10_000, "length": 128},
                       pe_lib.base_summary(512, 128, base=10_000.0), problems)
        expected_text = (f"{pe_lib.base_summary(512, 128)['slow_pairs']} of 256 pairs have a wavelength > L = 128; "
                         f"neighbour distance {pe_lib.neighbour_distance(512):.3f}")
        if expected_text not in start["text"]:
            problems.append(f"shown: {start['text']!r}, expected it to contain {expected_text!r}")
        for name, value in [("length", 4096), ("d_model", 64), ("base", 1.7)]:
            moved = _move(page, "base", name, value)
            p = moved["state"]["params"]
            want = pe_lib.base_summary(p["d_model"], p["length"], base=p["base"])
            problems += _close(moved["state"]["summary"], want)
            if moved["pictures"] == start["pictures"]:
                problems.append(f"moving {name} did not redraw the pictures")
            start = moved
        p = start["state"]["params"]
        curve = np.array(page.evaluate("([d, L, b]) => Array.from(window.peExplorer.distanceCurve(d, L, b))",
                                       [p["d_model"], p["length"], p["base"]]))
        want = np.sqrt(pe_lib.squared_distance(np.arange(p["length"] + 1), p["d_model"], base=p["base"]))
        if np.abs(curve - want).max() > 1e-12 * np.sqrt(p["d_model"]):
            problems.append(f"distance curve off by {np.abs(curve - want).max():.2e} from pe_lib")


def test_number_check_can_fail():
    assert _close({"pairs": 64, "ratio": 1.0}, {"pairs": 64, "ratio": 1.0}) == []
    assert _close({"pairs": 63, "ratio": 1.0 + 1e-9}, {"pairs": 64, "ratio": 1.0}) == [
        "pairs: browser 63, pe_lib 64", f"ratio: browser {1.0 + 1e-9!r}, pe_lib 1.0"]


# Records every text an explorer draws with the CSS pixels its glyphs get: the font's size, times the
# horizontal squeeze fillText applies when the text is wider than its maxWidth argument.
RECORD_CANVAS_TEXT = """
(() => {
  const fill = CanvasRenderingContext2D.prototype.fillText;
  window.peTexts = [];
  CanvasRenderingContext2D.prototype.fillText = function (text, x, y, maxWidth) {
    const width = this.measureText(text).width;
    const squeeze = maxWidth !== undefined && width > maxWidth ? maxWidth / width : 1;
    if (this.canvas.closest('.pe-explorer')) window.peTexts.push([String(text), parseFloat(this.font) * squeeze]);
    return fill.apply(this, arguments);
  };
})();
"""
# slider settings that make the titles long: every digit count the sliders reach
EXPLORER_SETTINGS = {
    ("notebooks/04_visualizing", "table"): [{}, {"n_positions": 1024, "d_model": 1024}, {"base": 5.3}],
    ("notebooks/09_why_10000", "base"): [{}, {"d_model": 1024, "length": 4096}, {"base": 6.9, "length": 1}],
}


@pytest.mark.parametrize("viewport", [PHONE, VIEWPORT], ids=["phone", "desktop"])
@pytest.mark.parametrize(("docname", "kind"), list(EXPLORER_SETTINGS), ids=lambda v: v.split("/")[-1])
def test_explorer_text_is_at_least_10_css_px(browser, site, viewport, docname, kind):
    """Every text of an explorer's charts, titles included, at 10 CSS px or more, like the figures' text
    (issue 30, item 7: the titles were squeezed to 9 px on a phone)."""
    context = new_context(browser, viewport=viewport)
    context.add_init_script(RECORD_CANVAS_TEXT)
    try:
        with checked_page(browser, site, docname, kind, context=context) as (page, problems):
            small = set()
            for setting in EXPLORER_SETTINGS[(docname, kind)]:
                for name, value in setting.items():
                    _move(page, kind, name, value)
                texts = page.evaluate("() => { const t = window.peTexts; window.peTexts = []; return t; }")
                assert texts, f"{kind} explorer drew no text"
                small |= {(text, round(px, 1)) for text, px in texts if px < 10 - 1e-9}
            problems += [f"{text!r} at {px} CSS px" for text, px in sorted(small)]
    finally:
        context.close()
