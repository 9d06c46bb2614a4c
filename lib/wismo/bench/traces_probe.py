"""`python -m wismo.bench.traces_probe MODE FILE...`: in a fresh process, the files read line by line (MODE lines),
each line JSON-decoded (json), analysed as `wismo traces` reads them in one pass (analysis: spans, conversations,
chains), the whole command `wismo traces FILE... --no-report` as its own process (command; command-first with no
price lookups kept from an earlier run, as the first run after installing is), or analysed by the
partitioned pipeline on a local Dask cluster of one or two worker processes started before the clock starts
(pipeline1, pipeline2: the per-worker rate); prints its time and peak memory as one JSON line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

from wismo.bench.procfs import peak_rss_mb


def main(mode: str, paths: list[str]) -> dict[str, object]:
    """Time one way of reading the files, after the imports it needs."""
    if mode in ("analysis", "pipeline1", "pipeline2"):
        from wismo.accounting.cost import prices
        from wismo.runs.traces import analysis

        prices.lookup("gpt-4.1-mini")  # looked up before timing (or read as kept), so base memory includes it
    cluster, child_peak_mb = None, None
    if mode.startswith("pipeline"):
        from wismo.runs.traces import partitioned

        cluster = partitioned.local_cluster(int(mode[-1]))
    base = peak_rss_mb()
    started = time.perf_counter()
    conversations = None
    if mode == "lines":
        for path in paths:
            with open(path, encoding="utf-8") as handle:
                for _ in handle:
                    pass
    elif mode == "json":
        for path in paths:
            with open(path, encoding="utf-8") as handle:
                for line in handle:
                    json.loads(line)
    elif mode in ("command", "command-first"):
        from wismo.accounting.cost import price_cache

        with tempfile.TemporaryDirectory(prefix="wismo-bench-command-") as out:
            command = [sys.executable, "-m", "wismo", "traces", *paths, "--no-report", "--out", f"{out}/traces"]
            # The first run's cache is an empty folder; the other runs' the one this process was given.
            env = {**os.environ, price_cache.CACHE_ENV: f"{out}/cache"} if mode == "command-first" else None
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=env)
        import resource

        child_peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # Linux: KiB
    else:
        address = cluster.scheduler_address if cluster is not None else None
        conversations = analysis.analyse(paths, dask=address)["conversations"]
    elapsed = time.perf_counter() - started
    if cluster is not None:
        cluster.close()
    return {
        "ms": elapsed * 1000,
        "peakRssMb": peak_rss_mb(),
        "baseRssMb": base,
        "commandPeakRssMb": child_peak_mb,  # the command's own process, where MODE is command
        "priceLibraryImported": "genai_prices" in sys.modules,  # by this process (its lookups not kept)
        "conversations": conversations,
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2:])))
