"""Crash safety of :func:`ragassay.atomic.write_folder`: a kill at any step of replacing a
folder leaves, after :func:`recover`, the old folder or the new one, complete, and the next
write leaves no hidden leftovers."""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import shutil
import signal
import stat
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from builders import ROOT

import ragassay.atomic as atomic
from ragassay.atomic import FolderWriter, recover, write_bytes, write_folder
from ragassay.errors import InputError

OLD = {"metrics.json": b'{"old": 1}\n', "sub/rows.jsonl": b"old\n", "sub/deep/x.bin": b"\x00o"}
NEW = {"metrics.json": b'{"new": 2}\n', "sub/rows.jsonl": b"new\nrow\n", "extra.txt": b"n",
       "sub/deep/x.bin": b"\x01n"}
THIRD = {"only.txt": b"third"}
VARIANTS = ["exchange", "two-rename"]
linux_only = pytest.mark.skipif(atomic._renameat2() is None, reason="no renameat2 here")


def filler(files: dict[str, bytes]) -> Callable[[FolderWriter], None]:
    def fill(out: FolderWriter) -> None:
        for name, data in files.items():
            out.bytes(name, data)
    return fill


def files_of(folder: Path) -> dict[str, bytes]:
    assert folder.is_dir() and not folder.is_symlink(), f"{folder} is missing"
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def hidden(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith("."))


def use_variant(monkeypatch: pytest.MonkeyPatch, variant: str) -> None:
    if variant == "two-rename":
        monkeypatch.setattr(atomic, "_exchange", lambda a, b: False)
    elif atomic._renameat2() is None:
        pytest.skip("no renameat2 here")


def dead_pid() -> int:
    """The pid of a process that has ended (and was reaped)."""
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(proc.stdout)


# --- fault injection in this process ---------------------------------------------------


class Crash(BaseException):
    """The process dies here: not an ``OSError``, so no ``except OSError`` swallows it."""


class Faults:
    """Counts the calls that change the disk; the ``n``-th call of ``op`` fails.

    ``mode="crash"``: that call and every later one raise :class:`Crash`, so the cleanup
    code that would run in a live process changes nothing, as after a SIGKILL (a file
    being written is left half-written). ``mode="error"``: only that call raises ``EIO``.
    """

    def __init__(self, op: str = "", n: int = 0, mode: str = "crash") -> None:
        self.op, self.n, self.mode = op, n, mode
        self.counts: Counter[str] = Counter()
        self.dead = False
        self.fired = False

    def guard(self, op: str) -> None:
        if self.dead:
            raise Crash(f"{op} after the crash")
        self.counts[op] += 1
        if op == self.op and self.counts[op] == self.n:
            self.fired = True
            if self.mode == "crash":
                self.dead = True
                raise Crash(f"{op} #{self.n}")
            raise OSError(errno.EIO, f"injected failure of {op} #{self.n}")

    def install(self, mp: pytest.MonkeyPatch) -> None:
        real_rename, real_unlink, real_rmdir = os.rename, os.unlink, os.rmdir
        real_mkdir, real_rmtree = os.mkdir, shutil.rmtree
        real_write_new, real_journal = atomic._write_new, atomic._write_journal
        real_exchange = atomic._exchange

        def wrap(op: str, real: Callable[..., Any]) -> Callable[..., Any]:
            def call(*args: Any, **kwargs: Any) -> Any:
                self.guard(op)
                return real(*args, **kwargs)
            return call

        def rmtree(path: Any, ignore_errors: bool = False, **kwargs: Any) -> None:
            try:
                self.guard("rmtree")
            except OSError:
                if ignore_errors:
                    return
                raise
            real_rmtree(path, ignore_errors=ignore_errors, **kwargs)

        def write_new(path: Path, data: bytes) -> None:
            was_dead = self.dead
            try:
                self.guard("write")
            except Crash:
                if not was_dead:  # killed halfway through this write
                    with open(path, "xb") as fh:
                        fh.write(data[: len(data) // 2])
                raise
            real_write_new(path, data)

        def journal(path: Path, record: dict[str, Any]) -> None:
            self.guard("journal")
            real_journal(path, record)

        mp.setattr(os, "rename", wrap("rename", real_rename))
        mp.setattr(os, "unlink", wrap("unlink", real_unlink))
        mp.setattr(os, "rmdir", wrap("rmdir", real_rmdir))
        mp.setattr(os, "mkdir", wrap("mkdir", real_mkdir))
        mp.setattr(shutil, "rmtree", rmtree)
        mp.setattr(atomic, "_write_new", write_new)
        mp.setattr(atomic, "_write_journal", journal)
        mp.setattr(atomic, "_exchange", wrap("exchange", real_exchange))


def replace_with_faults(dest: Path, faults: Faults, variant: str,
                        mp: pytest.MonkeyPatch) -> BaseException | None:
    with mp.context() as m:
        use_variant(m, variant)
        faults.install(m)
        try:
            write_folder(dest, filler(NEW), force=True)
        except (Crash, OSError) as exc:
            return exc
    return None


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_fault_at_every_step_leaves_the_old_or_the_new_folder(
        variant: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    probe = tmp_path / "probe" / "run"
    write_folder(probe, filler(OLD))
    clean = Faults()
    assert replace_with_faults(probe, clean, variant, monkeypatch) is None
    assert files_of(probe) == NEW
    ops = sorted(clean.counts.items())
    assert dict(ops).get("exchange" if variant == "exchange" else "journal") == 1
    points = [(op, n, mode) for op, count in ops for n in range(1, count + 1)
              for mode in ("crash", "error")]
    assert len(points) >= 20

    failures: list[str] = []
    for i, (op, n, mode) in enumerate(points):
        parent = tmp_path / f"case{i}"
        dest = parent / "run"
        write_folder(dest, filler(OLD))
        faults = Faults(op, n, mode)
        raised = replace_with_faults(dest, faults, variant, monkeypatch)
        where = f"{op} #{n} ({mode})"
        try:
            assert faults.fired
            assert mode == "error" or isinstance(raised, Crash)
            if mode == "error":  # the process lives on: dest is as the exception says
                assert files_of(dest) == (OLD if raised else NEW)
            elif variant == "exchange":  # dest is never missing, even before recover()
                assert files_of(dest) in (OLD, NEW)
            with monkeypatch.context() as m:
                m.setattr(atomic, "_pid_alive", lambda pid: False)  # as after the kill
                recover(dest)
            assert files_of(dest) in (OLD, NEW)
            assert hidden(parent) == []
            write_folder(dest, filler(THIRD), force=True)
            assert files_of(dest) == THIRD
            assert hidden(parent) == []
        except AssertionError as exc:
            failures.append(f"{where}: {exc}")
    assert failures == [], "\n".join([f"{len(failures)} of {len(points)} failed", *failures])


def test_the_two_rename_swap_is_rolled_forward_once_the_new_folder_is_complete(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dest = tmp_path / "run"
    write_folder(dest, filler(OLD))
    # killed between the two renames: no dest, only the old folder, the new one, the journal
    raised = replace_with_faults(dest, Faults("rename", 2), "two-rename", monkeypatch)
    assert isinstance(raised, Crash)
    assert not dest.exists()
    kinds = sorted(name.split(".")[2].split("-")[0] for name in hidden(tmp_path))
    assert kinds == ["lock", "old", "swap", "tmp"]  # the lock: its holder was killed
    monkeypatch.setattr(atomic, "_pid_alive", lambda pid: False)
    messages = recover(dest)
    assert files_of(dest) == NEW
    assert "finished replacing the folder" in messages[0]
    assert hidden(tmp_path) == []


# --- a real process killed with SIGKILL at each step ----------------------------------

CHILD = r"""
import os, shutil, signal, sys
import ragassay.atomic as atomic

dest, step, variant = sys.argv[1:4]
NEW = {new!r}

def die():
    os.kill(os.getpid(), signal.SIGKILL)

if variant == "two-rename":
    atomic._exchange = lambda a, b: False
atomic._step = lambda name: die() if name == step else None
if step == "deleting":  # killed halfway through deleting the old folder
    real = shutil.rmtree
    def rmtree(path, ignore_errors=False):
        for root, _, files in os.walk(path):
            if files:
                os.unlink(os.path.join(root, files[0]))
                die()
        real(path, ignore_errors=ignore_errors)
    shutil.rmtree = rmtree

def fill(out):
    for i, (name, data) in enumerate(NEW.items()):
        if step == "filling" and i == 2:
            die()
        out.bytes(name, data)

atomic.write_folder(dest, fill, force=True)
"""

# the step the child is killed at -> the folder found afterwards
KILLS = {
    "exchange": {"filling": OLD, "filled": OLD, "exchanged": NEW, "deleting": NEW, "": NEW},
    "two-rename": {"filling": OLD, "filled": OLD, "journaled": OLD, "moved-aside": NEW,
                   "moved-in": NEW, "deleting": NEW, "old-deleted": NEW, "": NEW},
}


@pytest.mark.parametrize(("variant", "step"),
                         [(v, s) for v, steps in KILLS.items() for s in steps])
def test_a_process_killed_at_each_step(variant: str, step: str, tmp_path: Path,
                                       caplog: pytest.LogCaptureFixture) -> None:
    if variant == "exchange" and atomic._renameat2() is None:
        pytest.skip("no renameat2 here")
    dest = tmp_path / "run"
    write_folder(dest, filler(OLD))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    proc = subprocess.run([sys.executable, "-c", CHILD.format(new=NEW), str(dest), step,
                           variant], env=env, capture_output=True, text=True, timeout=60)
    if step:
        assert proc.returncode == -signal.SIGKILL, proc.stderr
        if variant == "exchange":
            assert files_of(dest) in (OLD, NEW)  # never missing, even before recover()
    else:
        assert proc.returncode == 0, proc.stderr
    with caplog.at_level(logging.WARNING, logger="ragassay.atomic"):
        messages = recover(dest)
    assert files_of(dest) == KILLS[variant][step]
    assert hidden(tmp_path) == []
    assert [r.getMessage() for r in caplog.records] == messages
    if step in ("filling", "filled", "exchanged", "deleting"):
        assert messages and all("interrupted write" in m for m in messages)
    write_folder(dest, filler(THIRD), force=True)
    assert files_of(dest) == THIRD
    assert hidden(tmp_path) == []


# --- recovery --------------------------------------------------------------------------


def test_write_folder_recovers_a_missing_dest_left_by_an_older_release(tmp_path: Path) -> None:
    # the release before the journal: killed between its two renames
    dest = tmp_path / "index"
    pid = dead_pid()
    write_folder(tmp_path / "staging", filler(OLD))
    os.rename(tmp_path / "staging", tmp_path / f".index.old-{pid}-0123abcd")
    (tmp_path / f".index.tmp-{pid}-0123abcd").mkdir()
    messages = recover(dest)
    assert files_of(dest) == OLD
    assert "put the previous folder back" in messages[0]
    assert hidden(tmp_path) == []
    with pytest.raises(InputError, match="already exists"):
        write_folder(dest, filler(NEW))


def test_leftovers_are_removed_and_reported_by_the_next_write(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    dest = tmp_path / "run"
    write_folder(dest, filler(OLD))
    pid = dead_pid()
    (tmp_path / f".run.tmp-{pid}-00000000").mkdir()
    (tmp_path / f".run.tmp-{pid}-00000000" / "big.bin").write_bytes(b"x" * 1000)
    (tmp_path / f".run.swap-{pid}-11111111.json").write_text('{"new": ')  # cut short
    (tmp_path / f".run.old-{pid}-22222222").mkdir()
    with caplog.at_level(logging.WARNING, logger="ragassay.atomic"):
        write_folder(dest, filler(NEW), force=True)
    assert files_of(dest) == NEW
    assert hidden(tmp_path) == []
    text = caplog.text
    assert f".run.tmp-{pid}-00000000: removed" in text
    assert f"pid {pid}" in text
    assert len(caplog.records) == 3


def test_a_write_in_progress_and_other_names_are_left_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dest = tmp_path / "run"
    mine = tmp_path / f".run.tmp-{os.getpid()}-abcdef01"  # this process: alive
    mine.mkdir()
    other = [tmp_path / f".run2.tmp-{dead_pid()}-abcdef01", tmp_path / ".run.tmp-notes",
             tmp_path / f".run.tmp-{dead_pid()}-abcdef01.bak"]
    for path in other:
        path.mkdir()
    assert recover(dest) == []
    write_folder(dest, filler(NEW))
    assert mine.is_dir() and all(p.is_dir() for p in other)
    monkeypatch.setattr(atomic, "STALE_SECONDS", -1)  # too old to be a write in progress
    assert len(recover(dest)) == 1
    assert not mine.exists() and all(p.is_dir() for p in other)


def test_recover_never_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert recover(tmp_path / "no" / "such" / "run") == []
    dest = tmp_path / "run"
    old = tmp_path / f".run.old-{dead_pid()}-0123abcd"
    write_folder(old, filler(OLD))
    real = os.rename

    def denied(src: Any, dst: Any) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", str(src))

    monkeypatch.setattr(os, "rename", denied)  # a read-only folder: a reader's recover()
    messages = recover(dest)
    assert "could not recover it" in messages[0] and "Permission denied" in messages[0]
    assert files_of(old) == OLD  # kept for a later try
    monkeypatch.setattr(os, "rename", real)
    recover(dest)
    assert files_of(dest) == OLD


# --- the exchange itself ---------------------------------------------------------------


@linux_only
def test_renameat2_exchanges_two_folders(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    write_folder(a, filler(OLD))
    write_folder(b, filler(NEW))
    assert atomic._exchange(a, b) is True
    assert files_of(a) == NEW and files_of(b) == OLD
    with pytest.raises(FileNotFoundError):
        atomic._exchange(a, tmp_path / "missing")


@pytest.mark.parametrize("err", [errno.ENOSYS, errno.EINVAL])
def test_a_filesystem_without_exchange_gets_the_two_rename_swap(
        err: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def unsupported(a: bytes, b: bytes, flags: int) -> int:
        ctypes.set_errno(err)
        return -1

    monkeypatch.setattr(atomic, "_renameat2", lambda: unsupported)
    dest = tmp_path / "run"
    write_folder(dest, filler(OLD))
    write_folder(dest, filler(NEW), force=True)
    assert files_of(dest) == NEW
    assert hidden(tmp_path) == []


def test_another_exchange_error_keeps_the_old_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = atomic._renameat2()

    def broken(a: bytes, b: bytes, flags: int) -> int:
        if flags != 2 and real is not None:  # the first write's RENAME_NOREPLACE works
            return real(a, b, flags)
        ctypes.set_errno(errno.EIO)
        return -1

    monkeypatch.setattr(atomic, "_renameat2", lambda: broken)
    dest = tmp_path / "run"
    write_folder(dest, filler(OLD))
    with pytest.raises(OSError, match="Input/output error"):
        write_folder(dest, filler(NEW), force=True)
    assert files_of(dest) == OLD
    assert hidden(tmp_path) == []


# --- modes, links, files, long names ---------------------------------------------------


@pytest.fixture()
def umask_022() -> Iterator[None]:
    before = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(before)


@pytest.mark.parametrize("variant", VARIANTS)
def test_modes_follow_the_umask(variant: str, tmp_path: Path, umask_022: None,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    use_variant(monkeypatch, variant)
    dest = tmp_path / "run"
    write_folder(dest, filler(OLD))
    write_folder(dest, filler(NEW), force=True)  # the replacement keeps them too
    for path in [dest, *dest.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o755 if path.is_dir() else 0o644), path
    assert stat.S_IMODE(write_bytes(tmp_path / "r.json", b"{}").stat().st_mode) == 0o644


@pytest.mark.parametrize("force", [False, True])
def test_a_symlink_dest_is_refused_not_replaced(force: bool, tmp_path: Path) -> None:
    target = tmp_path / "real"
    write_folder(target, filler(OLD))
    link = tmp_path / "run"
    link.symlink_to(target, target_is_directory=True)
    with pytest.raises(InputError, match="symbolic link") as info:
        write_folder(link, filler(NEW), force=force)
    assert info.value.path == str(link)
    assert link.is_symlink() and files_of(target) == OLD
    dangling = tmp_path / "gone"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(InputError, match="symbolic link"):
        write_folder(dangling, filler(NEW), force=force)
    assert dangling.is_symlink() and not (tmp_path / "nowhere").exists()
    assert hidden(tmp_path) == []


@pytest.mark.parametrize("force", [False, True])
def test_a_file_dest_is_refused(force: bool, tmp_path: Path) -> None:
    dest = tmp_path / "run"
    dest.write_text("keep me")
    with pytest.raises(InputError, match="not a folder") as info:
        write_folder(dest, filler(NEW), force=force)
    assert info.value.path == str(dest)
    assert dest.read_text() == "keep me"
    assert hidden(tmp_path) == []


@pytest.mark.parametrize("name", ["r" * 128, "a" * 255, "가" * 85, "run-" + "é" * 125])
@pytest.mark.parametrize("variant", VARIANTS)
def test_long_names_get_short_temporary_names(name: str, variant: str, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    assert len(os.fsencode(name)) <= 255
    for kind in ("tmp", "old", "swap"):
        assert len(os.fsencode(atomic._sibling(tmp_path / name, kind).name)) <= 255
    use_variant(monkeypatch, variant)
    dest = tmp_path / name
    write_folder(dest, filler(OLD))
    write_folder(dest, filler(NEW), force=True)
    assert files_of(dest) == NEW
    write_bytes(tmp_path / name / name, b"file")
    assert hidden(tmp_path) == []
    # and what a killed writer of a long name leaves is found again
    # (between the two renames, or before the old folder is deleted)
    fault = Faults("rename", 2) if variant == "two-rename" else Faults("rmtree", 1)
    assert isinstance(replace_with_faults(dest, fault, variant, monkeypatch), Crash)
    monkeypatch.setattr(atomic, "_pid_alive", lambda pid: False)
    assert recover(dest)
    assert files_of(dest) == NEW
    assert hidden(tmp_path) == []


def test_similar_long_names_do_not_share_temporary_names(tmp_path: Path) -> None:
    a, b = "x" * 250 + "a", "x" * 250 + "b"
    assert atomic._stem(a) != atomic._stem(b)
    assert atomic._stem("short") == "short"


def test_a_streamed_file_is_part_of_the_folder_and_an_error_leaves_no_folder(
        tmp_path: Path) -> None:
    from ragassay.jsonio import jsonl_text, write_jsonl

    rows = [{"i": i, "text": "하자" * i} for i in range(7)]

    def fill(out: FolderWriter) -> None:
        with out.open("sub/rows.jsonl") as fh:
            assert write_jsonl(fh, iter(rows), batch=3) == 7
        out.text("after.txt", "done")

    dest = write_folder(tmp_path / "run", fill)
    assert (dest / "sub/rows.jsonl").read_text(encoding="utf-8") == jsonl_text(rows)
    assert (dest / "after.txt").read_text(encoding="utf-8") == "done"

    def fail_midway(out: FolderWriter) -> None:
        with out.open("rows.jsonl") as fh:
            fh.write(b'{"i": 0}\n')
            raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        write_folder(tmp_path / "other", fail_midway)
    assert not (tmp_path / "other").exists()
    assert hidden(tmp_path) == []


# --- two writers of one destination ---------------------------------------------------------

EXAMPLE = ROOT / "examples" / "shop_faq_de"
HOLD = """
import sys
from ragassay.targets import claim
with claim(sys.argv[1]):
    print("held", flush=True)
    sys.stdin.readline()
"""


def _run(root: Path, run_id: str) -> list[str]:
    return [sys.executable, "-m", "ragassay", "run", "-c", str(EXAMPLE / "config.yaml"),
            "--output-root", str(root), "-q", "--run-id", run_id, "--no-progress"]


def test_a_run_id_another_process_is_writing_is_refused_at_once(tmp_path: Path) -> None:
    """Process A holds ``runs/r`` (as a run does from its first check to its rename);
    ``ragassay run --run-id r`` in process B is refused with exit 2 and one line, and
    writes nothing; once A has ended, the same command succeeds."""
    root = tmp_path / "runs"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(root / "r")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        refused = subprocess.run(_run(root, "r"), capture_output=True, text=True)
        assert refused.returncode == 2, refused.stderr
        assert refused.stderr.strip().count("\n") == 0
        assert f"another ragassay process (pid {holder.pid})" in refused.stderr
        assert not (root / "r").exists()
    finally:
        holder.communicate("\n")
    assert subprocess.run(_run(root, "r"), capture_output=True).returncode == 0
    assert (root / "r" / "metrics.json").is_file()
    assert hidden(root) == []  # the lock is gone with its holder


def test_two_runs_of_one_id_started_at_once_one_wins(tmp_path: Path) -> None:
    """Two `ragassay run --run-id same` started together: whichever order the machine
    gives them, one exits 0 and the other 2 (refused while the first holds the id, or
    because the folder exists once it is done); the folder is the winner's, whole."""
    root = tmp_path / "runs"
    procs = [subprocess.Popen(_run(root, "same"), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate() for p in procs]
    codes = sorted(p.returncode for p in procs)
    assert codes == [0, 2], outs
    loser = outs[[p.returncode for p in procs].index(2)][1]
    assert "another ragassay process" in loser or "already used" in loser, loser
    from ragassay.runfolder import read_run_folder as read_run

    assert read_run(root / "same").run_id == "same"
    assert hidden(root) == []


def test_a_folder_that_appears_while_filling_is_never_replaced(tmp_path: Path) -> None:
    """Without ``force`` the final rename refuses a destination another writer created
    meanwhile (RENAME_NOREPLACE, or a check then a rename that cannot replace a folder
    that is not empty): its files stay as they are, and no temporary is left."""
    dest = tmp_path / "out"

    def fill(out: FolderWriter) -> None:
        out.bytes("metrics.json", b"mine")
        dest.mkdir()
        (dest / "metrics.json").write_bytes(b"theirs")  # another process wins meanwhile

    with pytest.raises(InputError, match="another process meanwhile"):
        write_folder(dest, fill)
    assert files_of(dest) == {"metrics.json": b"theirs"}
    assert hidden(tmp_path) == []
