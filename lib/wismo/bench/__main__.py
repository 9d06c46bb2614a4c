"""`python -m wismo.bench` (`make bench`): every benchmark, its table, outputs/bench.json."""

import sys

from .cli import main

sys.exit(main())
