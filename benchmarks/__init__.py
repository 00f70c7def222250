"""Benchmarks: decoding speed, selection, online adaptation, data generation, the router (not installed)."""

from pathlib import Path


def save_figure(fig, path: Path, dpi: int = 110) -> None:
    """A matplotlib figure to `path` through a temporary file (a kill never leaves half a PNG), its folder made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=dpi)
    tmp.replace(path)
