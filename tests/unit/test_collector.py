"""The garbage collector while a run evaluates: paused, then as it was."""

from __future__ import annotations

import gc

import pytest

from ragassay.collector import collector_paused


@pytest.fixture(autouse=True)
def _collector_as_it_was() -> object:
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


@pytest.mark.parametrize("enabled", [True, False])
def test_the_pause_restores_the_collector_as_it_was(enabled: bool) -> None:
    (gc.enable if enabled else gc.disable)()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled() is enabled
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("a failed run restores it too")
    assert gc.isenabled() is enabled
