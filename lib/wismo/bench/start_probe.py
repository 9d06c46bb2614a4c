"""`python -m wismo.bench.start_probe DESIGN`: in a fresh interpreter, the imports `wismo serve` makes before it
can answer, then building the server; prints {"importsMs", "buildMs"} as one JSON line (perf_counter, no
-X importtime overhead)."""

import importlib
import json
import sys
import time


def main(design: str) -> dict[str, float]:
    """Time the imports, then the build of the design's server on the dataset."""
    # The imports are inside the function on purpose: they are what is timed.
    t0 = time.perf_counter()
    import anyio  # noqa: F401
    import mcp.server.runner  # noqa: F401

    # By name: the CLI sits above the benchmarks (its `wismo bench` runs them); this process only times its import.
    importlib.import_module("wismo.cli")
    from wismo.domain import load
    from wismo.mcp.servers import (
        app,
        design_tools,
    )

    t1 = time.perf_counter()
    app.build_server(design, design_tools(design), load())
    t2 = time.perf_counter()
    return {"importsMs": (t1 - t0) * 1000, "buildMs": (t2 - t1) * 1000}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
