"""`python -m ragassay`: the console command (see :mod:`ragassay.command`)."""

from .command import main

main()
