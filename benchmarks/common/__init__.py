"""Code several benchmarks share (a benchmark never imports another benchmark's main module): the domain router's
training, the online benchmarks' stream and replay, the synthetic suffix-index corpus."""
