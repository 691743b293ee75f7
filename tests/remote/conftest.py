"""The remote tests' shared server (helpers: ``remote.servers``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from remote.servers import Running, running


@pytest.fixture(scope="module")
def server() -> Iterator[Running]:
    """A server of any id, with default options."""
    with running() as found:
        yield found
