"""Runs one pytest file of the Python package for CTest.

Exits 77 (CTest's SKIP_RETURN_CODE for these tests) with the reason printed when
pytest or NumPy is missing, so the suite skips instead of failing on a machine
without the Python packages (tools/scripts/setup.sh --test installs them).
"""

import sys

try:
    import numpy  # noqa: F401
    import pytest
except ImportError as e:
    print(f"SKIP: the Python tests need pytest and NumPy ({e}); run tools/scripts/setup.sh --test")
    sys.exit(77)

code = pytest.main(["-q", "-p", "no:cacheprovider", "-rs", *sys.argv[1:]])
sys.exit(int(code))
