"""A conftest that skips its directory (a library it needs is not installed), as cuDF's conftests may."""
import pytest

pytest.importorskip("no_such_library_for_parity")
