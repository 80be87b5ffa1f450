"""Start a local Ray that opens no connection outside 127.0.0.1.

Ray's head always starts a dashboard process, even with ``include_dashboard=False``; it
then loads only its usage-statistics module, and that module describes the cluster before
it reads whether usage statistics are on: it reads ``~/ray_bootstrap_config.yaml`` (the
file Ray's cluster launcher puts on a head node) and, when the file is missing, probes the
cloud metadata addresses (HTTP to 169.254.169.254, a DNS query for
``metadata.google.internal``). ``RAY_USAGE_STATS_ENABLED=0`` does not stop the probe.

So the local Ray's processes run with ``HOME`` set to a private folder of this process that
holds an empty ``ray_bootstrap_config.yaml``: Ray reads its cluster description from there
and makes no request. ``HOME`` is changed only while ``ray.init`` starts the processes
(they, and the workers the raylet starts later, keep it); Ray's auth token is written into
that folder too, not into the user's home. The folder is removed when this process exits.

Verified with strace in a loopback-only network namespace
(``tests/integration/test_ray_network.py``) for the Ray releases in :data:`VERIFIED_RAY`;
another release is refused, since a change inside Ray could bring the probe back.
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from .errors import InputError

LOCALHOST = "127.0.0.1"
# the releases whose local start the strace test has checked (pyproject's `ray` extra pins the same)
VERIFIED_RAY = ("2.60.",)
RAY_EXTRA_PIN = "ray>=2.60,<2.61"


def check_ray_version(version: str) -> None:
    """Refuse (:class:`InputError`, exit 2) a Ray release whose local start has not been
    checked to stay on the loopback."""
    if not version.startswith(VERIFIED_RAY):
        raise InputError("executor.kind", f"a local Ray is started only with a release checked "
                         f"to open no connection outside {LOCALHOST} ({RAY_EXTRA_PIN}); "
                         f"Ray {version} is installed: pip install '{RAY_EXTRA_PIN}', or give "
                         "the address of a cluster you run (executor.address)")


def private_home() -> Path:
    """A folder for the local Ray's ``HOME``: an empty ``ray_bootstrap_config.yaml`` (so Ray
    does not probe cloud metadata addresses), removed when this process exits."""
    home = Path(tempfile.mkdtemp(prefix="ragassay-ray-home-"))
    (home / "ray_bootstrap_config.yaml").write_text(
        "# written by ragassay: a local Ray on 127.0.0.1, no cloud provider\n{}\n",
        encoding="utf-8")
    atexit.register(shutil.rmtree, home, ignore_errors=True)
    return home


def start_local_ray(cpus: int) -> None:
    """Start a Ray instance in this process with ``cpus`` CPUs that connects to nothing but
    127.0.0.1: the node address given explicitly (and Ray's look-up of a "reachable"
    address off, which would otherwise probe a public address to pick the machine's own
    IP), no dashboard, no usage statistics, no cloud metadata probe (:func:`private_home`),
    worker output not echoed here."""
    import ray
    from ray._private import ray_constants

    check_ray_version(ray.__version__)
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    # Single-node mode: Ray's own look-up of the node address answers the loopback. Read
    # when ray is imported: by the processes Ray starts from this environment, and here
    # (set on the module too, for a ray imported before this call).
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    ray_constants.ENABLE_RAY_CLUSTER = False
    home = os.environ.get("HOME")
    os.environ["HOME"] = str(private_home())
    try:
        ray.init(address="local", num_cpus=cpus, _node_ip_address=LOCALHOST,
                 include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    finally:
        if home is None:
            os.environ.pop("HOME", None)
        else:
            os.environ["HOME"] = home
    quiet_raylet_errors()


_log = logging.getLogger("ragassay")


def quiet_raylet_errors() -> None:
    """Keep the errors Ray's raylets publish off this process's stdout. Ray's driver prints
    each one there (``(raylet) A worker died or was killed ...``, a paragraph on one line),
    where it would mix with a command's output (``--format json``) and come beside
    ragassay's own line for the same fault (a lost worker: exit 2, see
    :class:`ragassay.executor.WorkerLost`); they go to the debug log instead. Ray's other
    output is printed as before. Installed once, for the Ray sessions ragassay starts."""
    from ray._private import worker

    printer = worker.print_to_stdstream
    if getattr(printer, "ragassay_quiet", False):
        return

    def quiet(data: dict[str, Any], ignore_prefix: bool) -> None:
        if data.get("pid") == "raylet":
            _log.debug("ray: %s", " ".join(map(str, data.get("lines", ()))))
            return
        printer(data, ignore_prefix)

    quiet.ragassay_quiet = True  # type: ignore[attr-defined]
    # the driver's error listener looks the printer up in its module at each message
    worker.print_to_stdstream = quiet
