"""`python -m ragassay.cli`: the command line."""

from . import app
from .common import one_command_process

one_command_process()
app()
