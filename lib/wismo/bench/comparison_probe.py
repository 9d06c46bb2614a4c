"""`python -m wismo.bench.comparison_probe TRANSPORT LATER_PASSES [SERVER_TRANSPORT]`: in this fresh process,
start both servers, time the whole comparison once and then LATER_PASSES more times, then as many round trips
through a raw echo of the same transport; prints the figures as one JSON line."""

from __future__ import annotations

import functools
import json
import sys
import time

from wismo.bench.floors import echo_for
from wismo.bench.settings import PROBE_ORDER, SDK_TRANSPORT_ENV
from wismo.mcp.client.raw import line, tools_call


async def comparison_passes(transport: str, later_passes: int, server_transport: str = "wismo") -> dict[str, object]:
    """Both servers up, the comparison (tools/list of both, every case on both designs) timed pass by pass; the
    first pass carries any one-time cost. The floor is as many round trips through a raw echo, right after."""
    from wismo.mcp.client.connection import connect
    from wismo.mcp.servers import designs
    from wismo.reports.analyses import comparison as compare
    from wismo.studies.declaration import article

    env = dict(SDK_TRANSPORT_ENV) if server_transport == "sdk" else None
    study = article()
    cases = study.select(None)
    passes, calls, equal = [], 0, True
    reference, one_call = designs.REFERENCE, designs.ONE_CALL
    async with connect(reference, transport, env) as granular, connect(one_call, transport, env) as focused:
        for _ in range(1 + later_passes):
            before = len(granular.interactions) + len(focused.interactions)
            started = time.perf_counter()
            await granular.list_tools()
            await focused.list_tools()
            conns = {reference: granular, one_call: focused}
            rows = [(await compare.compare_case(conns, case, study))[0] for case in cases]
            passes.append((time.perf_counter() - started) * 1000)
            calls = len(granular.interactions) + len(focused.interactions) - before
            equal = equal and compare.summarise(rows, list(conns), reference)["allEqual"]
    payload = line(tools_call("get_order", {"orderId": PROBE_ORDER}))
    with echo_for(transport) as echo:
        echo.round_trip(payload)
        started = time.perf_counter()
        for _ in range(calls):
            echo.round_trip(payload)
        floor = (time.perf_counter() - started) * 1000
    return {"passesMs": passes, "requests": calls, "cases": len(cases), "allEqual": equal, "floorMs": floor}


if __name__ == "__main__":
    import anyio

    transport, later, *server = sys.argv[1:]
    print(json.dumps(anyio.run(functools.partial(comparison_passes, transport, int(later)), *server)))
