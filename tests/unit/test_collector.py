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


def test_run_then_exit_leaves_the_collector_off_and_the_exit_code_as_it_was() -> None:
    """An entry point's command runs with the collector as it was; after it (also when it
    raises SystemExit, as typer does) the collector is off for the process's exit."""
    from ragassay.collector import run_then_exit

    gc.enable()
    seen: list[bool] = []

    def command() -> None:
        seen.append(gc.isenabled())
        raise SystemExit(3)

    with pytest.raises(SystemExit) as exited:
        run_then_exit(command)
    assert exited.value.code == 3 and seen == [True] and not gc.isenabled()
