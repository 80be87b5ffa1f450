"""A local Ray opens no connection outside 127.0.0.1 (and sends no DNS query).

The check runs the Ray executor under strace in a network namespace that has only the
loopback (``scripts/netcheck.py``), so a regression fails here without any traffic leaving
the machine. It needs root and strace; CI has both and sets ``RAGASSAY_REQUIRE_NETCHECK=1``,
so there it runs instead of skipping. Under ``scripts/netcheck.py`` already (CI runs the whole
suite that way: ``RAGASSAY_NETCHECK=1``), strace cannot nest: the workload runs as it is and
the outer check, which fails on the same destinations, judges it.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from builders import ROOT

from ragassay.errors import InputError
from ragassay.localray import check_ray_version

NETCHECK = ROOT / "scripts" / "netcheck.py"
sys.path.insert(0, str(NETCHECK.parent))
import netcheck  # noqa: E402

# a module of its own, so that the Ray workers import the unit by name (PYTHONPATH)
UNIT = """
def double(shared, chunk):
    return [shared * x for x in chunk]
"""
WORKLOAD = """
import time
from ragassay.executor import open_executor
from netcheck_unit import double

with open_executor("ray", 2) as ex:
    assert ex.map(double, list(range(20)), 2) == [2 * x for x in range(20)]
    time.sleep(5)  # the dashboard process's usage-statistics module starts meanwhile
print("ray ran")
"""


TRACED = os.environ.get("RAGASSAY_NETCHECK") == "1"  # under scripts/netcheck.py already


def _netcheck_available() -> str | None:
    if importlib.util.find_spec("ray") is None:
        return "the ray extra is not installed"
    if TRACED:
        return None
    if shutil.which("strace") is None:
        return "strace is not installed (apt-get install strace)"
    if os.geteuid() != 0:
        return "a network namespace needs root"
    return None


def test_trace_lines_are_read_by_hand_worked_examples() -> None:
    trace = "\n".join([
        '12 connect(5<TCP:[101]>, {sa_family=AF_INET, sin_port=htons(80), '
        'sin_addr=inet_addr("169.254.169.254")}, 16) = -1 ENETUNREACH',
        '12 connect(6<TCP:[102]>, {sa_family=AF_INET, sin_port=htons(6379), '
        'sin_addr=inet_addr("127.0.0.1")}, 16) = 0',
        '13 connect(7<UDPv6:[103]>, {sa_family=AF_INET6, sin6_port=htons(443), '
        'sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "2001:db8::1", &sin6_addr), '
        'sin6_scope_id=0}, 28) = -1',
        '13 connect(8<UDP:[104]>, {sa_family=AF_INET, sin_port=htons(53), '
        'sin_addr=inet_addr("10.0.0.53")}, 16) = 0',
        '13 sendto(9<UDP:[105]>, "\\x12", 1, 0, {sa_family=AF_INET, sin_port=htons(53), '
        'sin_addr=inet_addr("10.0.0.54")}, 16) = 1',
        '14 connect(10<UNIX:[106]>, {sa_family=AF_UNIX, sun_path="/run/x.sock"}, 110) = 0',
        '14 read(3, "sin_port=htons(1), sin_addr=inet_addr(\\"8.8.8.8\\")", 40) = 40',
    ])
    seen = netcheck.destinations(trace)
    assert seen == {("169.254.169.254", 80, "connect"): 1, ("127.0.0.1", 6379, "connect"): 1,
                    ("2001:db8::1", 443, "udp-connect"): 1, ("10.0.0.53", 53, "udp-connect"): 1,
                    ("10.0.0.54", 53, "send"): 1}
    assert [d[0] for d in seen if netcheck.leaves(*d)] == [
        "169.254.169.254", "2001:db8::1", "10.0.0.53", "10.0.0.54"]
    # a route probe (a datagram connect() sends nothing) passes only when asked; DNS never
    assert [d[0] for d in seen if netcheck.leaves(*d, udp_probes=True)] == [
        "169.254.169.254", "10.0.0.53", "10.0.0.54"]
    assert all(netcheck.is_loopback(a) for a in ("127.0.0.1", "127.5.0.1", "::1",
                                                  "::ffff:127.0.0.1", "0.0.0.0"))


def test_unverified_ray_release_is_refused() -> None:
    check_ray_version("2.60.0")
    with pytest.raises(InputError, match="ray>=2.60,<2.61"):
        check_ray_version("2.59.0")


def test_local_ray_connects_only_to_the_loopback(tmp_path: Path) -> None:
    why = _netcheck_available()
    if why:
        if os.environ.get("RAGASSAY_REQUIRE_NETCHECK") == "1":
            pytest.fail(f"RAGASSAY_REQUIRE_NETCHECK=1 but {why}")
        pytest.skip(why)
    trace = tmp_path / "trace.txt"
    (tmp_path / "netcheck_unit.py").write_text(UNIT, encoding="utf-8")
    path = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH")) if p)
    check = [] if TRACED else [sys.executable, str(NETCHECK), "--trace", str(trace), "--"]
    done = subprocess.run(
        [*check, sys.executable, "-c", WORKLOAD],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": path})
    assert "ray ran" in done.stdout, done.stdout + done.stderr
    if TRACED:
        return
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 outside the loopback" in done.stderr
    # the check saw Ray at work: its processes talk to each other over the loopback
    assert netcheck.destinations(trace.read_text(errors="replace"))
