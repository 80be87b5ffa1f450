"""Run a command in a network namespace that has only the loopback, trace every connect()
and send of it and of its children (strace -f), and list where they went.

    python scripts/netcheck.py [--trace FILE] -- COMMAND [ARG ...]

Prints on stderr, after the command's own output, each destination outside the loopback
(address:port, how many times) and a line per loopback address (how many connects, to how
many ports). Exits 1 when any connect() or addressed send went outside 127.0.0.0/8 and ::1
(datagram route probes are listed, and pass with --allow-udp-probes), else the command's own
exit code. Nothing can leave the machine while it runs: the namespace has no route but the
loopback, so a regression shows up here as a failed connect() instead of traffic. Needs root
and strace (seccomp-bpf filtering keeps the overhead to the traced calls, so a whole test
suite runs under it).
"""

from __future__ import annotations

import argparse
import ctypes
import fcntl
import ipaddress
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

_CALL = re.compile(r"\b(connect|sendto|sendmsg)\(\d+(?:<(\w+):)?")
_INET = re.compile(r'sin_port=htons\((\d+)\), sin_addr=inet_addr\("([^"]+)"\)')
_INET6 = re.compile(r'sin6_port=htons\((\d+)\).*?inet_pton\(AF_INET6, "([^"]+)"')
_EXEC = re.compile(r'^(\d+)\s+execve\("[^"]*", \[(.*?)\](?:, |\s*<unfinished)')
_SPAWN = re.compile(r"^(\d+)\s+(?:<\.\.\. )?(?:clone3?|fork|vfork)\b.*= (\d+)")
CLONE_NEWNET = 0x40000000
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1


def destinations(trace: str) -> Counter[tuple[str, int, str]]:
    """Every (address, port, call) an AF_INET/AF_INET6 connect() or addressed send of the
    trace names (Unix sockets have no address here and are not listed). ``call`` is
    ``connect``, ``udp-connect`` (a datagram socket's connect(), which sends no packet: it
    only picks a route, as a resolver's reachability probe does) or ``send``; the socket's
    protocol comes from strace's ``-yy`` annotation of the descriptor."""
    seen: Counter[tuple[str, int, str]] = Counter()
    for line in trace.splitlines():
        call = _CALL.search(line)
        if call is None:
            continue
        kind = ("send" if call.group(1) != "connect"
                else "udp-connect" if (call.group(2) or "").startswith("UDP") else "connect")
        for pattern in (_INET, _INET6):
            for port, addr in pattern.findall(line):
                seen[(addr, int(port), kind)] += 1
    return seen


def programs(trace: str) -> dict[tuple[str, int, str], Counter[str]]:
    """For each destination of :func:`destinations`, the programs that called it: a thread or
    child process is its parent's program until it runs ``execve`` (the first four
    arguments of the command line are kept)."""
    prog: dict[str, str] = {}
    by: dict[tuple[str, int, str], Counter[str]] = {}
    for line in trace.splitlines():
        if (spawn := _SPAWN.match(line)) is not None:
            prog.setdefault(spawn.group(2), prog.get(spawn.group(1), "?"))
        elif (run := _EXEC.match(line)) is not None:
            args = re.findall(r'"((?:[^"\\]|\\.)*)"', run.group(2))[:4]
            prog[run.group(1)] = " ".join(args)
        else:
            pid = line.split(" ", 1)[0]
            for dest in destinations(line):
                by.setdefault(dest, Counter())[prog.get(pid, "?")] += 1
    return by


def leaves(addr: str, port: int, kind: str, *, udp_probes: bool = False) -> bool:
    """Whether a destination counts as leaving the machine: anything outside the loopback,
    except (with ``udp_probes``) a datagram connect() to a port other than DNS's, which
    sends nothing."""
    if is_loopback(addr):
        return False
    return not (udp_probes and kind == "udp-connect" and port != 53)


def is_loopback(addr: str) -> bool:
    """127.0.0.0/8, ::1 and the IPv4-mapped loopback; also the unspecified address, which a
    socket "connects" to when it resets its peer (AF_UNSPEC), not a destination."""
    ip = ipaddress.ip_address(addr)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback or ip.is_unspecified


def _loopback_only_namespace() -> None:
    """Move this process into a new network namespace and bring its loopback up (what
    ``unshare -n`` and ``ip link set lo up`` do, without needing iproute2)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"unshare(CLONE_NEWNET): {os.strerror(err)} (needs root)")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        got = fcntl.ioctl(s, SIOCGIFFLAGS, struct.pack("16sH", b"lo", 0))
        flags = struct.unpack("16sH", got)[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH", b"lo", flags | IFF_UP))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trace", type=Path, help="keep strace's output in this file")
    parser.add_argument("--allow-udp-probes", action="store_true",
                        help="list datagram connect()s to ports other than 53 (route probes "
                             "that send no packet, e.g. Chromium's IPv6 reachability check) "
                             "without failing on them")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given")
    if shutil.which("strace") is None:
        print("netcheck: strace is not installed (apt-get install strace)", file=sys.stderr)
        return 2
    try:
        _loopback_only_namespace()
    except OSError as exc:
        print(f"netcheck: {exc}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="netcheck-") as tmp:
        out = args.trace or Path(tmp) / "trace.txt"
        # a test that would trace on its own sees that it is traced already (strace cannot nest)
        env = {**os.environ, "RAGASSAY_NETCHECK": "1"}
        calls = "connect,sendto,sendmsg,execve,clone,clone3,fork,vfork"  # the last: who called
        code = subprocess.call(["strace", "-f", "-qq", "--seccomp-bpf", "-yy", "-e",
                                f"trace={calls}", "-o", str(out), *command], env=env)
        trace = out.read_text(errors="replace")
    seen = destinations(trace)
    callers = programs(trace)
    outside = {dest: n for dest, n in seen.items()
               if leaves(*dest, udp_probes=args.allow_udp_probes)}
    for (addr, port, kind), n in sorted(seen.items()):
        if not is_loopback(addr):
            mark = "OUTSIDE" if (addr, port, kind) in outside else "probe"
            print(f"{mark}\t{kind}\t{addr}:{port}\t{n}", file=sys.stderr)
            for program, times in callers.get((addr, port, kind), Counter()).most_common(5):
                print(f"\t\tby {program} ({times})", file=sys.stderr)
    ports: dict[str, set[int]] = {}
    for addr, port, _ in seen:
        if is_loopback(addr):
            ports.setdefault(addr, set()).add(port)
    for addr, used in sorted(ports.items()):
        n = sum(c for (a, _, _), c in seen.items() if a == addr)
        print(f"loopback\t{addr}\t{n} connects/sends to {len(used)} ports", file=sys.stderr)
    print(f"netcheck: command exit {code}; {sum(seen.values())} connects/sends, "
          f"{sum(outside.values())} outside the loopback", file=sys.stderr)
    if outside:
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())
