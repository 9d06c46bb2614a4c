"""`python -m wismo.bench.large_order_probe LINES`: in a fresh process, a LINES-line order's focused result built
and serialized, then compared with the granular records (every link followed, each record serialized as its
tool returns it), then the focused JSON text parsed once (the floor); prints times and memory as one JSON line."""

from __future__ import annotations

import json
import sys
import time

from wismo.bench.procfs import peak_rss_mb
from wismo.core.jsonfmt import compact
from wismo.domain import ORDER, PAYMENT, RESERVATION, TRACKING, linked, load, support_context
from wismo.mcp.servers import designs
from wismo.reports.analyses import comparison


def _as_returned(record: object) -> object:
    """A record as a tool returns it: serialized, then read back."""
    return json.loads(compact(record))


def main(lines: int) -> dict[str, object]:
    """Time the focused result, the comparison and the floor on one generated order of `lines` lines."""
    base_rss = peak_rss_mb()
    dataset = load(large=[lines])
    order_id = f"ORD-9{lines:05d}"
    t0 = time.perf_counter()
    focused_text = compact(support_context(dataset, order_id))
    t1 = time.perf_counter()
    order = dataset.get(ORDER, order_id)
    granular = {
        "order": _as_returned(order),
        "payment": _as_returned(linked(dataset, PAYMENT, order["paymentId"])),
        "reservations": [_as_returned(linked(dataset, RESERVATION, r)) for r in order["reservationIds"]],
        "tracking": [_as_returned(linked(dataset, TRACKING, t)) for t in order["trackingIds"]],
    }
    differences = comparison.differences(granular, json.loads(focused_text), designs.article())
    t2 = time.perf_counter()
    json.loads(focused_text)
    t3 = time.perf_counter()
    return {
        "focusedMs": (t1 - t0) * 1000,
        "comparisonMs": (t2 - t1) * 1000,
        "floorMs": (t3 - t2) * 1000,
        "bytes": len(focused_text.encode()),
        "differences": len(differences),
        "peakRssMb": peak_rss_mb(),
        "baseRssMb": base_rss,
    }


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]))))
