"""Atomic writes and file hashing: a killed write never leaves a half-written file or folder in place."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def cache_root() -> Path:
    """Where draftpool caches converted targets: $DRAFTPOOL_CACHE or ~/.cache/draftpool."""
    return Path(os.environ.get("DRAFTPOOL_CACHE", Path.home() / ".cache" / "draftpool"))


def atomic_write_text(path: str | Path, text: str) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex[:8]}")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def atomic_write_json(path: str | Path, obj: Any) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=False) + "\n")


@contextlib.contextmanager
def atomic_dir(path: str | Path) -> Iterator[Path]:
    """Yield a temp folder beside `path`; on success it replaces `path` (the old one is kept until the swap)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex[:8]}")
    tmp.mkdir()
    try:
        yield tmp
        _default_modes(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = None
    if path.exists():
        old = path.with_name(f".{path.name}.old-{uuid.uuid4().hex[:8]}")
        os.replace(path, old)
    os.replace(tmp, path)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _default_modes(root: Path) -> None:
    """Give every file the mode a plain `open` would (0644 under umask 022): some writers (safetensors) create their
    files 0600, which a server running as another user could not read."""
    mask = os.umask(0)
    os.umask(mask)
    for path in root.rglob("*"):
        path.chmod((0o777 if path.is_dir() else 0o666) & ~mask)


def sha256_file(path: str | Path, chunk: int = 1 << 22) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def weights_hash(model_dir: str | Path) -> str:
    """sha256 over the model folder's weight files (sorted by name), cached beside them by size and mtime."""
    model_dir = Path(model_dir)
    files = sorted(p for p in model_dir.iterdir() if p.suffix in (".safetensors", ".bin", ".gguf"))
    if not files:
        raise FileNotFoundError(f"no weight files (*.safetensors, *.bin, *.gguf) in {model_dir}")
    stamp = [[p.name, p.stat().st_size, int(p.stat().st_mtime)] for p in files]
    cache = model_dir / ".draftpool_weights_hash.json"
    try:
        cached = json.loads(cache.read_text())
        if cached["stamp"] == stamp:
            return cached["sha256"]
    except (OSError, ValueError, KeyError):
        pass
    h = hashlib.sha256()
    for p in files:
        h.update(p.name.encode())
        h.update(sha256_file(p).encode())
    digest = h.hexdigest()
    with contextlib.suppress(OSError):  # read-only hub caches are fine: we just recompute next time
        atomic_write_json(cache, {"stamp": stamp, "sha256": digest})
    return digest


class LockedError(RuntimeError):
    """A folder another run is writing to."""


@contextlib.contextmanager
def run_lock(folder: str | Path) -> Iterator[Path]:
    """Hold `<folder>/.lock` (fcntl.flock) for the duration: a second run into the same folder fails at once, naming
    the holder's pid. The lock goes with the process, so a killed run never leaves the folder locked. A folder the
    lock made and the run left empty (it failed on bad input before writing) is removed: nothing half-made stays."""
    folder = Path(folder)
    made = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / ".lock"
    f = open(path, "a+")  # noqa: SIM115 - held open for the lock's lifetime
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.seek(0)
        holder = f.read().strip() or "?"
        f.close()
        raise LockedError(f"{folder} is in use by another run (pid {holder}); wait for it or choose another folder") \
            from None
    try:
        f.seek(0)
        f.truncate()
        f.write(str(os.getpid()))
        f.flush()
        yield folder
    finally:
        if made and [p.name for p in folder.iterdir()] == [".lock"]:
            with contextlib.suppress(OSError):  # unlinked while held: a waiting run then makes its own
                path.unlink()
                folder.rmdir()
        f.close()  # closing releases the lock


def check_writable(path: str | Path, what: str) -> None:
    """Fail before any work when `path` cannot become a folder: an existing non-folder on the way, or no permission."""
    path = Path(path).absolute()
    probe = path
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise NotADirectoryError(f"{what} {path} cannot be created: {probe} is a file, not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise PermissionError(f"{what} {path} cannot be created: {probe} is not writable")
