"""Benchmarks of rivulet against baseline systems; run as ``python -m bench.<name>``.

Each benchmark writes its figures to ``bench/results/<name>.json`` (``<name>.quick.json``
with ``--quick``), prints a table, and draws ``bench/results/<name>.png``. Shared helpers
(Zipf sampling, timing, result files, tables, plots) live in :mod:`bench.common`.
Benchmarks use only rivulet's public API.
"""
