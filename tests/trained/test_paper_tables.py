"""pe_lib.trained.paper_tables: every number checked against the text pypdf extracted from the papers' PDFs
(tests/trained/data/paper_tables_extracted.txt; no PDF is stored), and bits_change by hand."""

import pathlib
import re

import numpy as np
import pytest

from pe_lib.trained import paper_tables as pt

EXTRACTED = (pathlib.Path(__file__).parent / "data" / "paper_tables_extracted.txt").read_text(encoding="utf-8")


def rows(text: str) -> dict:
    """{first word of a line: the numbers after it} for every line of ``text`` that starts a table row."""
    found = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) > 1 and all(re.fullmatch(r"[\d.]+|OOM|-", w) for w in words[1:]):
            found[words[0]] = words[1:]
    return found


@pytest.mark.parametrize(("table", "caption", "train_len"), [
    (pt.PRESS_TABLE_2, "Table 2: The sinusoidal, rotary, T5 bias and ALiBi models trained on L = 512", 512),
    (pt.PRESS_TABLE_3, "Table 3: The sinusoidal, rotary, T5 bias and ALiBi models trained on L = 1024", 1024),
])
def test_press_rows_are_the_pdf_text(table, caption, train_len):
    # the rows follow the caption; each reads: inputs, then PPL and WPS for the four columns
    printed = rows(EXTRACTED[EXTRACTED.index(caption):].split("##")[0])
    assert min(table) == train_len
    for length, values in table.items():
        ppl = printed[str(length)][0::2]  # PPL, WPS, PPL, WPS, ...
        assert [f"{v:.2f}" for v in values] == ppl, length
    assert "Sinusoidal Rotary T5 Bias ALiBi" in EXTRACTED  # the column order of PRESS_COLUMNS
    assert pt.PRESS_COLUMNS == ("sinusoidal", "rope", "t5", "alibi")


def test_haviv_rows_are_the_pdf_text():
    haviv = EXTRACTED[EXTRACTED.index("## haviv2022nope"):]
    table_1 = rows(haviv[:haviv.index("Table 1:")])
    table_2 = rows(haviv[haviv.index("Model Size 125M 350M 760M 1.3B"):haviv.index("Table 2:")])
    names = ("NoPos", "Learned", "Sinusoidal", "ALiBi")  # the papers' names, in HAVIV_COLUMNS order
    assert pt.HAVIV_COLUMNS == ("none", "learned", "sinusoidal", "alibi")
    for k, setting in enumerate(pt.HAVIV_TABLE_1):  # columns WikiText-103, the Pile
        assert [f"{v:.2f}" for v in pt.HAVIV_TABLE_1[setting]] == [table_1[n][k] for n in names], setting
    assert list(pt.HAVIV_TABLE_2) == ["125M", "350M", "760M", "1.3B"]
    for k, size in enumerate(pt.HAVIV_TABLE_2):
        assert [f"{v:.2f}" for v in pt.HAVIV_TABLE_2[size]] == [table_2[n][k] for n in names], size


def test_bits_change_by_hand():
    assert pt.bits_change(4.0, 2.0) == pytest.approx(1.0)  # twice the perplexity: one bit more per token
    np.testing.assert_allclose(pt.bits_change([2.0, 8.0], 16.0), [-3.0, -1.0])
    assert pt.bits_change(19.73, 19.73) == 0.0


@pytest.mark.parametrize(("args", "message"), [
    ((0.5, 2.0), "perplexity must be a perplexity, at least 1"),
    ((2.0, [3.0, 0.0]), "reference must be a perplexity, at least 1 \\(2 to the bits per token\\), got 0.0"),
    ((np.nan, 2.0), "perplexity must be finite"),
])
def test_bad_perplexities_are_refused(args, message):
    with pytest.raises(ValueError, match=message):
        pt.bits_change(*args)
