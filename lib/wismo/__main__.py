"""`python -m wismo ...`: the same as the `wismo` command."""

import sys

from .cli import main

sys.exit(main())
