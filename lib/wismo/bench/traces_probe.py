"""`python -m wismo.bench.traces_probe MODE FILE...`: in a fresh process, the files read line by line (MODE lines),
each line JSON-decoded (json), analysed as `wismo traces` reads them in one pass (analysis: spans, conversations,
chains), or with the conversations built on two local worker processes (workers); prints its time and peak memory
as one JSON line."""

from __future__ import annotations

import json
import sys
import time

from wismo.bench.procfs import peak_rss_mb


def main(mode: str, paths: list[str]) -> dict[str, object]:
    """Time one way of reading the files, after the imports it needs."""
    if mode in ("analysis", "workers"):
        from wismo.accounting.cost import prices
        from wismo.runs.traces import analysis

        prices.lookup("gpt-4.1-mini")  # the price library's data loaded before timing, so base memory includes it
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
    else:
        conversations = analysis.analyse(paths, jobs=2 if mode == "workers" else 1)["conversations"]
    return {
        "ms": (time.perf_counter() - started) * 1000,
        "peakRssMb": peak_rss_mb(),
        "baseRssMb": base,
        "conversations": conversations,
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2:])))
