"""`wismo bench` (`make bench`): the suite's timings, each beside its physical floor, in one run.

Every benchmark is one module with one `bench_*` function, listed in suite.BENCHMARKS: it takes the Settings
(repetition counts) and returns a title, its figures (each a median and a p95 over repeated runs, with n, and how
many times its floor it is), the targets it is held to and the details that explain them, all computed in the
run. Floors are separate processes measured in the same run (floors.py). What must run in a fresh interpreter
is a module run with `python -m wismo.bench.<module>`: echo (the floors' far end), start_probe,
comparison_probe, large_order_probe and build_notebooks; toolserver is the 100-tool server of benchmark 7 (and of
the `wismo tokens` tests).

Nothing is imported here, so that `python -m wismo.bench.echo` starts as a bare interpreter does; only the CLI's
`wismo bench` imports it, when that command is chosen.
"""
