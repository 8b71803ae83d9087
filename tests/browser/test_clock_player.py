"""The kernel-free clock player (pe_lib.player_html) in headless Chromium, as each reader meets it.

Where its script runs (the website; JupyterLab once the cell has run) it must be a player: one frame
at a time, a slider, prev/play/next and the frame's label. Where no script runs — JupyterLab shows a
notebook it has not trusted with its scripts removed, and so does any page without JavaScript — it
must still work: every frame visible in a strip that scrolls sideways, and no control that does
nothing. The player that matplotlib's ``to_jshtml`` makes (and this book used before) fails the
second test: its buttons and slider are plain markup, dead without the script.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import pe_lib

pytestmark = pytest.mark.browser

FRAMES = 6


@pytest.fixture(scope="module")
def player() -> str:
    return pe_lib.clock_animation_html(np.arange(FRAMES), 8, pairs=(0, 1), dpi=30, width=3.0, height=1.6,
                                       html_id="t_player", interval_ms=40)


def _page(browser, html: str, *, javascript: bool):
    context = browser.new_context(java_script_enabled=javascript, viewport={"width": 390, "height": 700})
    page = context.new_page()
    page.set_content(f"<!doctype html><html><body>{html}</body></html>")
    return context, page


def _shown(page) -> list[int]:
    """Indices of the frames that are displayed and have loaded."""
    return page.eval_on_selector_all(
        "#t_player_frames img",
        "imgs => imgs.flatMap((img, i) => getComputedStyle(img).display !== 'none' && img.naturalWidth > 0 ? [i] : [])",
    )


def test_with_javascript_it_is_a_player(browser, player):
    context, page = _page(browser, player, javascript=True)
    try:
        assert _shown(page) == [0]
        assert page.locator("#t_player input[type=range]").count() == 1
        assert page.locator("#t_player button").all_inner_texts() == ["◀ prev", "play", "next ▶"]
        assert page.locator("#t_player_note").count() == 0  # the note about scrolling is gone
        label = page.locator("#t_player span")
        page.get_by_text("next ▶").click()
        page.get_by_text("next ▶").click()
        assert _shown(page) == [2] and label.inner_text() == "pos = 2"
        page.get_by_text("◀ prev").click()
        assert _shown(page) == [1]
        page.locator("#t_player input[type=range]").fill("4")  # dragging the slider fires "input"
        assert _shown(page) == [4] and label.inner_text() == "pos = 4"
        page.get_by_text("play").click()
        page.wait_for_function("document.querySelector('#t_player span').textContent !== 'pos = 4'", timeout=5000)
        page.get_by_text("pause").click()
        assert page.locator("#t_player button").nth(1).inner_text() == "play"
    finally:
        context.close()


@pytest.mark.parametrize("how", ["javascript off", "script removed, as JupyterLab shows an untrusted notebook"])
def test_without_its_script_every_frame_shows_in_a_strip_and_nothing_is_dead(browser, player, how):
    html = re.sub(r"<script>.*?</script>", "", player, flags=re.S) if how.startswith("script") else player
    context, page = _page(browser, html, javascript=not how.startswith("javascript"))
    try:
        assert _shown(page) == list(range(FRAMES))
        assert page.locator("#t_player button, #t_player input").count() == 0
        strip = page.locator("#t_player_frames")
        assert strip.evaluate("s => s.scrollWidth > s.clientWidth + 10")  # wider than a phone: it scrolls
        assert strip.evaluate("s => getComputedStyle(s).overflowX") == "auto"
        assert "scroll sideways" in page.locator("#t_player_note").inner_text()
        alts = page.eval_on_selector_all("#t_player_frames img", "imgs => imgs.map(i => i.alt)")
        assert alts == [f"clock hands of d_model = 8, pos = {p}" for p in range(FRAMES)]
    finally:
        context.close()


# ---- chapter 5's player on the website, as a reader sees it (issue 19, item 10) --------------------------
# The smallest label in CSS px: the frames' smallest text in frame pixels (data-text-px, from the figure's
# font sizes and dpi) times the shown width over the drawn width. Playback: the label's changes per second.
SHOWN_JS = """() => {
  const root = document.querySelector('.pe-player');
  const frame = Array.from(root.querySelectorAll('img')).find(i => getComputedStyle(i).display !== 'none');
  const box = frame.getBoundingClientRect(), slider = root.querySelector('input[type=range]').getBoundingClientRect();
  return {textPx: Number(root.dataset.textPx), natural: frame.naturalWidth, shown: box.width, height: box.height,
          slider: slider.width, column: root.parentElement.getBoundingClientRect().width,
          viewport: document.documentElement.clientWidth};
}"""
PLAYBACK_JS = """async (ms) => {
  const root = document.querySelector('.pe-player'), label = root.querySelector('span[aria-live]');
  const play = Array.from(root.querySelectorAll('button')).find(b => b.textContent === 'play');
  const times = [];
  const watch = new MutationObserver(() => times.push(performance.now()));
  watch.observe(label, {childList: true, characterData: true, subtree: true});
  play.click();
  await new Promise(done => setTimeout(done, ms));
  play.click();
  watch.disconnect();
  const gaps = times.slice(1).map((t, i) => t - times[i]);
  return {fps: (times.length - 1) / ((times.at(-1) - times[0]) / 1000), longest: Math.max(...gaps)};
}"""
MIN_LABEL_PX = 10
MIN_FPS = 6  # the chapter asks for 8 (interval_ms=125); a loaded machine may lose some


@pytest.mark.parametrize("width", [390, 1366])
def test_the_chapter_player_has_readable_labels_and_plays_smoothly(browser, site, width, record_property):
    from site_helpers import new_context, open_page

    context = new_context(browser, viewport={"width": width, "height": 900})
    visit = open_page(browser, site, "notebooks/05_the_clock.html", context=context)
    try:
        shown = visit.page.evaluate(SHOWN_JS)
        label_px = shown["textPx"] * shown["shown"] / shown["natural"]
        played = visit.page.evaluate(PLAYBACK_JS, 3000)
        record_property("clock_player", {"width": width, "label_px": round(label_px, 1), **played})
        problems = visit.problems(site)
        if not label_px >= MIN_LABEL_PX:
            problems.append(f"at {width} px the frame ({shown['natural']} px drawn) is shown {shown['shown']:.0f} px "
                            f"wide: its smallest labels are {label_px:.1f} CSS px (< {MIN_LABEL_PX})")
        if shown["shown"] > shown["natural"] + 0.5:
            problems.append(f"the frame is enlarged from {shown['natural']} to {shown['shown']:.0f} px (blurred)")
        if shown["shown"] > shown["viewport"] or abs(shown["slider"] - shown["shown"]) > 24:
            problems.append(f"frame {shown['shown']:.0f} px, slider {shown['slider']:.0f} px, "
                            f"viewport {shown['viewport']} px: the slider must span the frame, both fit")
        if not played["fps"] >= MIN_FPS:
            problems.append(f"plays at {played['fps']:.1f} frames per second (< {MIN_FPS}), "
                            f"longest gap {played['longest']:.0f} ms")
        print(f"clock player at {width} px: labels {label_px:.1f} CSS px, {played['fps']:.1f} fps, "
              f"longest gap {played['longest']:.0f} ms")
    finally:
        visit.close()
        context.close()
    assert not problems, problems
