"""Native serving: the one serve loop, the servers it drives (token drafting and lookahead share its `Server`
protocol), the request stream and answers files, stop signals, Prometheus metrics, and the token-drafting mode's
wiring (spec.py)."""
