"""pe_lib.book.installed: files read from installed packages, checked against a pinned SHA-256 (found by
`make mutate`: only the trained chapters' tests reached sha256_of and verified_file)."""

import hashlib

import pytest

from pe_lib.book import installed

ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"  # SHA-256("abc"), FIPS 180-2's example


def test_sha256_of_a_small_and_a_multi_block_file(tmp_path):
    small = tmp_path / "abc.txt"
    small.write_bytes(b"abc")
    assert installed.sha256_of(small) == ABC
    big = tmp_path / "big.bin"
    data = bytes(range(256)) * (3 * 4096 + 7)  # 3 MiB and a bit: read in 1 MiB blocks
    big.write_bytes(data)
    assert installed.sha256_of(big) == hashlib.sha256(data).hexdigest()


def test_verified_file_returns_the_path_or_names_it(tmp_path):
    path = tmp_path / "abc.txt"
    path.write_bytes(b"abc")
    assert installed.verified_file(path, ABC) == str(path)
    with pytest.raises(ValueError) as error:
        installed.verified_file(path, "0" * 64)
    assert str(error.value) == (f"{path} has SHA-256 {ABC}, expected {'0' * 64}: not the pinned file "
                                "(make venv installs it again)")


def test_package_file_finds_a_package_without_importing_it_and_refuses_what_is_no_package():
    assert installed.package_file("pytest", "__init__.py").endswith("__init__.py")
    for name in ("no_such_package_for_pe_lib", "math"):  # not installed; a module that is not a package
        with pytest.raises(ValueError) as error:
            installed.package_file(name, "x")
        assert str(error.value) == (f"the package {name!r} is not installed: make venv installs it "
                                    "(requirements-data.txt)")


@pytest.mark.parametrize("digit", [0, 31, 63])
def test_every_hex_digit_of_the_pin_counts(tmp_path, digit):
    # a pin that differs from the file's SHA-256 in one hex digit, first, middle or last, is refused (planted:
    # only the first 8 digits compared)
    path = tmp_path / "abc.txt"
    path.write_bytes(b"abc")
    other = ABC[:digit] + ("0" if ABC[digit] != "0" else "1") + ABC[digit + 1:]
    with pytest.raises(ValueError, match="not the pinned file"):
        installed.verified_file(path, other)
