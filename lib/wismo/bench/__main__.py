"""`python -m wismo.bench` (`make bench`): every benchmark, its table, outputs/bench.json."""

import sys

from wismo.bench.cli import main

sys.exit(main())
