"""`python -m ragassay.cli`: the command line."""

from . import app

app()
