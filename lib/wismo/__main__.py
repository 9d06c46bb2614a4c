"""`python -m wismo ...`: the same as the `wismo` command."""

import sys

from wismo.cli import main

sys.exit(main())
