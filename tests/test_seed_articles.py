"""The numbers printed in the source articles, recomputed. Where an article disagrees with the
formula, the test pins the correct value (see book/errata.md)."""

import re

import numpy as np

import pe_lib


def test_four_positions_d4_base100_table():
    # The article's table for "I am a robot" (n=100, d=4), computed from the formula.
    table = pe_lib.sinusoidal(4, 4, base=100)
    omega1 = 100 ** (-2 / 4)  # 0.1
    expected = np.array([[np.sin(p), np.cos(p), np.sin(p * omega1), np.cos(p * omega1)] for p in range(4)])
    np.testing.assert_allclose(table, expected, rtol=0, atol=1e-15)
    # Printed digits that agree with the formula (8 decimals as printed):
    printed_ok = {(1, 0): 0.84147098, (1, 1): 0.54030231, (1, 2): 0.09983342, (1, 3): 0.99500417,
                  (2, 0): 0.90929743, (2, 1): -0.41614684, (2, 2): 0.19866933, (2, 3): 0.98006658,
                  (3, 0): 0.14112001, (3, 1): -0.9899925, (3, 3): 0.95533649}
    for (p, j), value in printed_ok.items():
        assert round(table[p, j], 8) == value
    # The article prints 0.29552023 for (3, 2); sin(0.3) rounds to 0.29552021.
    assert round(table[3, 2], 8) == 0.29552021
    assert round(table[3, 2], 8) != 0.29552023


def test_pe1_for_d512_rounded_and_truncated():
    pe1 = pe_lib.sinusoidal([1], 512)[0]
    cols = [0, 1, 2, 3, 510, 511]
    rounded = [round(float(pe1[c]), 4) for c in cols]
    truncated = [float(np.trunc(pe1[c] * 1e4) / 1e4) for c in cols]
    assert rounded == [0.8415, 0.5403, 0.8219, 0.5697, 0.0001, 1.0]
    # the article's list is the truncation: 0.8414, 0.5403, 0.8218, 0.5696, ..., 0.0001, 0.9999
    assert truncated == [0.8414, 0.5403, 0.8218, 0.5696, 0.0001, 0.9999]


def test_pe0_is_alternating_zeros_and_ones():
    assert np.array_equal(pe_lib.sinusoidal([0], 512)[0], np.tile([0.0, 1.0], 256))


# The five source articles, in the order of book/errata.md's list, with the public address each one
# is linked to there (None: none found) and how that address was confirmed. This book's machines
# cannot open the sites; each address was found in public GitHub files that link to it next to
# something the copy the book worked from also has (issue 19, item 13).
ARTICLES = [
    ("Transformer's Positional Encoding", "https://kikaben.com/transformers-positional-encoding/",
     "a file credits its figure 'positional encodings for 128 words, each vector 512 dimensions' to this "
     "address, #chapter-4; the article's section 4 draws exactly that"),
    ("the AIML.com answer", "https://aiml.com/explain-the-need-for-positional-encoding-in-transformer-models/",
     "cited under the title 'Explain the need for Positional Encoding in Transformer models', and credited for a "
     "diagram of the sinusoidal encoding; the answer opens with such a diagram and a section 'The need for "
     "Positional Encoding'"),
    ("A Gentle Introduction",
     "https://machinelearningmastery.com/a-gentle-introduction-to-positional-encoding-in-transformer-models-part-1/",
     "study notes quote its 'I am a robot' table with n=100 and d=4 under this address; the book's copy is a "
     "reworded reprint of it with the same table (test_four_positions_d4_base100_table)"),
    ("the flashcard notes", None,
     "personal notes; their text is in a public GitHub file whose repository could not be identified"),
    ("Kazemnejad's post", "https://kazemnejad.com/blog/transformer_architecture_positional_encoding/",
     "the post's own BibTeX block gives this address; jitingxu1/Awesome-LLM-Learning-Path quotes its text under it"),
]


def _article_list() -> str:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "book" / "errata.md").read_text()
    return text[text.index("The five articles"):text.index("\n## ")]


def test_errata_links_each_source_article_it_can():
    items = _items(_article_list())
    assert len(items) == len(ARTICLES) == 5
    for item, (short, url, _how) in zip(items, ARTICLES, strict=True):
        assert short in item, f"the errata's list is not in ARTICLES' order at {short!r}"
        links = re.findall(r"\]\((https?://[^)\s]+)\)", item)
        if url is None:
            assert links == [] and "could not find a public address" in item, item
        else:
            assert links == [url], (short, links)


def _items(block: str) -> list[str]:
    return re.split(r"\n- ", block)[1:]
