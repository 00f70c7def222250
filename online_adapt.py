"""Serve a request stream with a drafter pool while a separate trainer process adapts the drafters (online).

    python online_adapt.py [--config recipes/online/adapt.yaml] [key=value ...]
    python online_adapt.py serve.http=127.0.0.1:8000              (OpenAI-compatible completions endpoint)
    python online_adapt.py --bench [benchmarks/online.py options]  (the domain-shift benchmark)

(installed: `online_adapt ...`; the code is online/adapt.py)
"""

import sys

from online.adapt import main

if __name__ == "__main__":
    sys.exit(main())
