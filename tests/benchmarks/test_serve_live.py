"""benchmarks.serve_live's pure parts: variant specs and reading a Prometheus scrape (the live runs are benchmark
commands, not tests: tests/online/serve/test_metrics.py checks the endpoint itself)."""

import pytest

from benchmarks import serve_live
from draftpool.config import ConfigError


def test_variants_are_names_with_overrides():
    v = serve_live.parse_variants("off:serve.adapt=false,on,old:process.nice=0:serve.threads=1")
    assert v == {"off": ["serve.adapt=false"], "on": [], "old": ["process.nice=0", "serve.threads=1"]}
    for bad in ("", "on,on", "x:noequals", ":a=b"):
        with pytest.raises(ConfigError):
            serve_live.parse_variants(bad)


def test_a_scrape_is_read_per_label_set_and_summed():
    text = ("# HELP draftpool:spec_decode_num_drafts Drafts.\n# TYPE draftpool:spec_decode_num_drafts counter\n"
            'draftpool:spec_decode_num_drafts_total{drafter="a"} 3.0\n'
            'draftpool:spec_decode_num_drafts_total{drafter="b"} 4.0\n')
    s = serve_live.samples(text)
    assert s[("draftpool:spec_decode_num_drafts_total", (("drafter", "a"),))] == 3.0
    assert serve_live.total(s, "draftpool:spec_decode_num_drafts_total") == 7.0
    assert serve_live.total(s, "draftpool:absent_total") == 0


def test_windowed_pairs_are_at_least_the_window_apart_and_the_latest_such():
    parsed = [(t, {"t": t}) for t in (0.0, 2.0, 4.0, 6.0, 9.0)]
    pairs = [(a, c) for a, _, c, _ in serve_live.windowed(parsed, 4.0)]
    assert pairs == [(0.0, 4.0), (2.0, 6.0), (4.0, 9.0)]
    assert serve_live.windowed(parsed, 100.0) == []
