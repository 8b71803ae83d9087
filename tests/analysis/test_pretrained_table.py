"""The loader of real position tables (pe_lib.analysis.pretrained_table) on small safetensors files written here."""

import hashlib
import zipfile

import numpy as np
import pytest
from safetensors.numpy import save_file

import pe_lib
from pe_lib.analysis import pretrained_table as pt


@pytest.fixture
def weights(tmp_path):
    table = np.arange(12, dtype=np.float32).reshape(4, 3) / 8  # exact in float32
    path = tmp_path / "model.safetensors"
    save_file({pt.POSITION_TENSOR: table, "other.bias": np.ones(3, np.float32)}, str(path))
    return path, table


def test_reads_the_named_tensor(weights):
    path, table = weights
    loaded = pe_lib.load_position_table(path)
    assert loaded.dtype == np.float64 and loaded.shape == (4, 3)
    np.testing.assert_array_equal(loaded, table)


def test_reads_from_inside_a_zip_and_checks_the_hash(weights, tmp_path):
    path, table = weights
    archive = tmp_path / "model.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("config.json", "{}")
        z.write(path, "model.safetensors")
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    np.testing.assert_array_equal(pe_lib.load_position_table(archive, sha256=sha), table)
    with pytest.raises(ValueError, match="not the pinned file"):
        pe_lib.load_position_table(archive, sha256="f" * 64)
    with pytest.raises(ValueError, match="has no 'weights.safetensors'.*config.json"):
        pe_lib.load_position_table(archive, member="weights.safetensors")


def test_bad_tensor_names_and_shapes(weights):
    path, _ = weights
    with pytest.raises(ValueError, match="no tensor 'missing'.*embeddings.position_embeddings.weight, other.bias"):
        pe_lib.load_position_table(path, name="missing")
    with pytest.raises(ValueError, match=r"has shape \(3,\)"):
        pe_lib.load_position_table(path, name="other.bias")


def test_the_installed_minilm_table():
    table = pe_lib.minilm_position_table()
    assert table.shape == (512, 384) and not table.flags.writeable
    norms = np.linalg.norm(table, axis=1)
    # measured when the package was chosen (issue 18): 2.36 at position 0, 0.97 at 511
    assert norms[0] == pytest.approx(2.36, abs=0.005) and norms[511] == pytest.approx(0.97, abs=0.005)


def test_other_tensors_of_the_installed_minilm_file():
    # BERT's uncased WordPiece vocabulary has 30522 entries; MiniLM-L6's width is 384 (its config.json)
    words = pe_lib.minilm_weights("embeddings.word_embeddings.weight")
    assert words.shape == (30522, 384) and words.dtype == np.float64
    np.testing.assert_array_equal(pe_lib.minilm_weights(pt.POSITION_TENSOR), pe_lib.minilm_position_table())
    with pytest.raises(ValueError, match="no tensor 'embeddings.missing'.*embeddings.word_embeddings.weight"):
        pe_lib.minilm_weights("embeddings.missing")
    with pytest.raises(ValueError, match=r"has shape \(384,\)"):
        pe_lib.minilm_weights("embeddings.LayerNorm.weight")
    with pytest.raises(TypeError, match="name must be a tensor name.*got int"):
        pe_lib.minilm_weights(0)


# ---- found by `make mutate` (each kills mutants that the tests above let live) ---------------------
def test_whole_error_messages_name_the_file_and_what_it_holds(weights, tmp_path):
    path, _ = weights
    archive = tmp_path / "model.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("config.json", "{}")
        z.writestr("vocab.txt", "")
        z.write(path, "model.safetensors")
    with pytest.raises(ValueError) as error:
        pe_lib.load_position_table(archive, member="weights.safetensors")
    holds = "config.json, vocab.txt, model.safetensors"
    assert str(error.value) == f"{archive} has no 'weights.safetensors'; it holds {holds}"
    with pytest.raises(ValueError, match=rf"^the weights in {archive} has SHA-256 [0-9a-f]{{64}}, expected f{{64}}"):
        pe_lib.load_position_table(archive, sha256="f" * 64)
    empty = tmp_path / "empty.safetensors"
    save_file({}, str(empty))
    with pytest.raises(ValueError) as error:
        pe_lib.load_position_table(empty)
    assert str(error.value) == f"no tensor {pt.POSITION_TENSOR!r} in the file; it has none"


def test_the_installed_weights_are_checked_against_the_pinned_sha256(monkeypatch):
    # the loading path the chapters use must verify the file, not only the function that can (issue 32:
    # a path that skipped the check passed every test)
    from pe_lib.analysis import pretrained_table

    monkeypatch.setattr(pretrained_table, "MINILM_SHA256", "0" * 64)
    pretrained_table.minilm_position_table.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"has SHA-256 [0-9a-f]{64}, expected 0{64}"):
            pe_lib.minilm_weights("embeddings.position_embeddings.weight")
        with pytest.raises(ValueError, match=r"expected 0{64}"):
            pe_lib.minilm_position_table()
    finally:
        pretrained_table.minilm_position_table.cache_clear()


# ---- max_seq_length (issue 27: the shipped pipeline keeps 256 tokens; rows 256-511 are never read) --------
def test_max_seq_length_read_from_a_zip_and_checked(tmp_path):
    archive = tmp_path / "model.zip"
    config = b'{"max_seq_length": 77, "do_lower_case": false}'
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr(pt.SENTENCE_CONFIG, config)
    assert pt.read_max_seq_length(archive, sha256=hashlib.sha256(config).hexdigest()) == 77
    with pytest.raises(ValueError, match=r"sentence_bert_config.json in .* has SHA-256 [0-9a-f]{64}, expected f{64}"):
        pt.read_max_seq_length(archive, sha256="f" * 64)
    for bad in (b'{"do_lower_case": false}', b'{"max_seq_length": 0}', b'{"max_seq_length": "256"}',
                b'{"max_seq_length": true}'):
        with zipfile.ZipFile(archive, "w") as z:
            z.writestr(pt.SENTENCE_CONFIG, bad)
        with pytest.raises(ValueError, match="has no positive whole max_seq_length, got"):
            pt.read_max_seq_length(archive)


def test_the_installed_minilm_keeps_256_tokens_of_its_512_rows(monkeypatch):
    # 256: the file as published with the model (sentence-transformers' all-MiniLM-L6-v2), read here by hand
    assert pe_lib.minilm_max_seq_length() == 256 < pe_lib.minilm_position_table().shape[0]
    monkeypatch.setattr(pt, "SENTENCE_CONFIG_SHA256", "0" * 64)
    with pytest.raises(ValueError, match=r"expected 0{64}"):
        pe_lib.minilm_max_seq_length()
