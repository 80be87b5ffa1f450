"""The garbage collector while a run evaluates: paused, then as it was (the CLI's one-command
process leaves it off until exit; a command invoked inside a program does not)."""

from __future__ import annotations

import gc

import pytest

from ragassay.cli import common
from ragassay.run import collector_paused


@pytest.fixture(autouse=True)
def _collector_as_it_was() -> object:
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


@pytest.mark.parametrize("enabled", [True, False])
def test_a_run_pauses_the_collector_and_restores_it(enabled: bool) -> None:
    (gc.enable if enabled else gc.disable)()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled() is enabled
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("a failed run restores it too")
    assert gc.isenabled() is enabled


def test_only_the_one_command_process_keeps_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    gc.enable()
    monkeypatch.setitem(common._ONE_COMMAND, "process", False)
    common.collector_off_until_exit()  # a command inside a program (a test's CliRunner)
    assert gc.isenabled()
    common.one_command_process()
    common.collector_off_until_exit()
    assert not gc.isenabled()
