"""`python -m ragassay.cli`: the command line."""

from ..collector import run_then_exit
from . import app

run_then_exit(app)
