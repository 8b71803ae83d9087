"""A first visit on a slow phone connection: the introduction is readable within 5 seconds.

Chromium emulates DevTools' "Slow 4G" profile (562.5 ms latency, 1.44 Mbit/s down, 675 kbit/s up)
with an empty cache, on a phone-sized window. "Readable" is the largest contentful paint: the moment
the largest block of text (or image) of the first screen is drawn. (The weight of every page on a
first visit is checked in test_pages.py; the time also depends on what blocks the first paint:
stylesheets and scripts in the head.)
"""

from __future__ import annotations

from urllib.parse import urljoin

import pytest
from site_helpers import PHONE, new_context, toc_docnames

pytestmark = pytest.mark.browser

# Chrome DevTools' "Slow 4G" preset (NetworkManager.ts): 1.6 Mbit/s and 750 kbit/s at 90 %, 150 ms x 3.75
SLOW_4G = {"offline": False, "latency": 150 * 3.75,
           "downloadThroughput": 1.6e6 / 8 * 0.9, "uploadThroughput": 750e3 / 8 * 0.9}  # bytes per second
READABLE_WITHIN_MS = 5000

PAINTS_JS = """() => new Promise(resolve => new PerformanceObserver((list, observer) => {
  const lcp = list.getEntries();
  resolve({lcp: lcp[lcp.length - 1].startTime, element: lcp[lcp.length - 1].element?.tagName ?? null,
           fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null,
           load: performance.getEntriesByType('navigation')[0].loadEventEnd});
}).observe({type: 'largest-contentful-paint', buffered: true}))"""


def test_the_introduction_is_readable_within_5_seconds_on_slow_4g(browser, site, record_property):
    context = new_context(browser, viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    try:
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
        cdp.send("Network.emulateNetworkConditions", SLOW_4G)
        page.goto(urljoin(site, f"{toc_docnames()[0]}.html"), wait_until="load", timeout=60_000)
        paints = page.evaluate(PAINTS_JS)
    finally:
        context.close()
    record_property("slow_4g", paints)  # printed at the end (conftest.py)
    assert paints["lcp"] <= READABLE_WITHIN_MS, (
        f"on slow 4G the introduction's text is drawn after {paints['lcp'] / 1000:.1f} s "
        f"(first paint {paints['fcp'] / 1000:.1f} s, everything loaded after {paints['load'] / 1000:.1f} s); "
        f"goal {READABLE_WITHIN_MS / 1000:.0f} s")
