"""Benchmarks: decoding speed, selection, online adaptation, data generation, the router (not installed).

Every benchmark runs on benchmarks/harness.py (common arguments, target and pool loading, one timer, results.json +
table.md + figures in its --out folder, progress lines on stderr, one error exit); code several benchmarks share lives
in benchmarks/common/; `python -m benchmarks.publish <out>` copies a run's figures into docs/.
"""
