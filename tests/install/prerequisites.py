"""What the install tests need from the machine: without it they skip, with CI=true fail."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def missing(why: str) -> NoReturn:
    """A prerequisite this machine lacks: a failure with CI=true, else a skip."""
    if os.environ.get("CI") == "true":
        pytest.fail(why)
    pytest.skip(f"{why} (with CI=true this fails)")
