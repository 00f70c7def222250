"""Benchmarks: decoding speed, selection, online adaptation, data generation, the router (not installed)."""

import os
import uuid
from pathlib import Path


def save_figure(fig, path: Path, dpi: int = 110) -> None:
    """A matplotlib figure, laid out tight, to `path` through a temporary file (a kill never leaves half a PNG), its
    folder made; the figure is closed."""
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.tmp-{uuid.uuid4().hex[:8]}.png")
    try:
        fig.tight_layout()
        fig.savefig(tmp, dpi=dpi)
        os.replace(tmp, path)
    finally:
        plt.close(fig)
        tmp.unlink(missing_ok=True)
