"""The performance appendix shows exactly the saved benchmark results (book/_data/performance.json)."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "benchmarks"))
import report  # noqa: E402


def test_page_block_is_the_rendering_of_the_saved_results():
    results = json.loads(report.RESULTS.read_text())
    block = report.generated_block(report.PAGE.read_text())
    assert block == report.render(results), "re-run `make bench` (tests/benchmarks/run.py) to refresh the page"


def test_the_prose_check_skips_exactly_the_generated_block():
    from test_prose_numbers import GENERATED, page_parts

    text = report.PAGE.read_text()
    (skipped,) = GENERATED.findall(text)
    assert skipped == report.START + "\n" + report.generated_block(text) + report.END
    _, body = page_parts(text)
    assert report.generated_block(text) not in body and "Performance notes" in body


def test_saved_ratios_are_the_ratios_of_the_saved_times():
    results = json.loads(report.RESULTS.read_text())
    for row in results["sinusoidal"]["sizes"]:
        t = row["times"]
        assert row["speedup_vs_vectorized"] == t["vectorized"]["median"] / t["pe_lib"]["median"]
        assert row["times_write_floor"] == t["pe_lib"]["median"] / t["write_floor"]["median"]
        assert all(v["min"] <= v["median"] <= v["max"] for v in t.values())


def test_a_changed_number_is_detected(tmp_path):
    results = json.loads(report.RESULTS.read_text())
    page = tmp_path / "performance.md"
    page.write_text(report.PAGE.read_text())
    results["sinusoidal"]["accuracy"]["pe_lib"] *= 10
    report.write_page(results, page)
    assert report.generated_block(page.read_text()) != report.generated_block(report.PAGE.read_text())
