"""Serve a request stream with a drafter pool while a separate trainer process adapts the drafters (online).

    python online_adapt.py [--config recipes/online/adapt.yaml] [key=value ...]
    python online_adapt.py serve.http=127.0.0.1:8000              (OpenAI-compatible completions endpoint)
    python online_adapt.py --bench [benchmarks/online.py options]  (the domain-shift benchmark, from a checkout)

(installed: `online_adapt ...`; the code is online/adapt.py)
"""

import sys

if __name__ == "__main__":
    argv = sys.argv[1:]
    if "--bench" in argv:
        from benchmarks.online import main as bench_main

        argv.remove("--bench")
        sys.exit(bench_main(argv))
    from online.adapt import main

    sys.exit(main(argv))
