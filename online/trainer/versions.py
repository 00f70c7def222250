"""Exported pool versions on disk: `<out_dir>/versions/v000123/` (a pool in the offline pipeline's format plus the
trainer's `trainer_state.pt`), `<out_dir>/latest.json` naming the newest, and what a restart may read of them.

A restart trusts nothing it finds: latest.json must name a version folder inside out_dir (symlinks resolved), the
trainer state is unpickled with `weights_only=True` (a crafted file runs no code), out_dir is checked writable before
anything loads, and the temp folders of exports killed mid-way are removed.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import torch

from draftpool.io import atomic_dir, atomic_write_json
from draftpool.models import get_kind
from draftpool.pool import Member
from online.trainer.weights import assign


@dataclass
class ExportSpec:
    """Where and how the trainer writes pool versions: the source pool's manifest and folders give the format."""

    out_dir: str
    source_pool: str
    target: object  # draftpool.target.TargetInfo


# ---------------------------------------------------------------------------------------------------------------------
VERSION_REF = re.compile(r"versions/v(\d{6,})")  # what latest.json may name: a version folder of this out_dir
STALE_EXPORT = re.compile(r"\.v\d{6,}\.(?:tmp|old)-[0-9a-f]+")  # atomic_dir's temp / old folders of a killed export


def latest_version(out_dir: str | Path) -> tuple[int, Path] | None:
    """(version, folder) of the newest complete exported pool version, or None. latest.json must name
    `versions/vNNNNNN` (its own version) inside out_dir, symlinks resolved: anything else -> ValueError (one line)."""
    out = Path(out_dir)
    path = out / "latest.json"
    if not path.is_file():
        return None
    try:
        info = json.loads(path.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path} is not valid JSON ({e}): restore or remove it") from None
    rel = info.get("path") if isinstance(info, dict) else None
    version = info.get("version") if isinstance(info, dict) else None
    m = VERSION_REF.fullmatch(rel) if isinstance(rel, str) else None
    if m is None or type(version) is not int or int(m.group(1)) != version:
        raise ValueError(f'{path} must be {{"version": N, "path": "versions/vNNNNNN"}} (version N of this out_dir), '
                         f"got {json.dumps(info)[:200]}")
    folder = out / rel
    if folder.resolve() != out.resolve() / rel:  # rule: no symlink may lead a resume out of out_dir
        raise ValueError(f"{path} names {rel}, which resolves to {folder.resolve()}, outside {out.resolve()}")
    return (version, folder) if (folder / "pool.json").is_file() else None


def load_trainer_state(path: str | Path) -> dict:
    """An exported trainer_state.pt, unpickled with weights_only=True (tensors, containers, numbers, strings: no code
    runs). A file that is not such a state -> ValueError (one line); an unreadable one -> OSError."""
    try:
        state = torch.load(path, weights_only=True)
    except OSError:
        raise
    except Exception as e:  # noqa: BLE001 - UnpicklingError (a forbidden global), a corrupt file, ...
        lines = [line.strip() for line in str(e).splitlines() if line.strip()]
        code = next((line for line in lines if "GLOBAL" in line), None)  # e.g. "... GLOBAL io.open was not allowed"
        why = code.split("error: ", 1)[-1].split(". ")[0].rstrip(".") if code else \
            f"{type(e).__name__}: {lines[0] if lines else 'unreadable'}"
        raise ValueError(f"{path} is not a safe trainer state ({why[:300]}): refused to load it; remove it to "
                         f"resume that version with a fresh optimizer") from None
    if not isinstance(state, dict) or not {"published", "rounds"} <= set(state):
        raise ValueError(f"{path} is not a trainer state (a dict with published weights and rounds)")
    return state


def check_out_dir(out_dir: str | Path) -> None:
    """Fail fast (OSError, one line) when out_dir cannot be written; creates nothing."""
    out = Path(out_dir).absolute()
    probe = next(p for p in (out, *out.parents) if p.exists() or p == p.parent)  # the nearest existing folder
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise OSError(f"out_dir {out} cannot be written ({probe} is not a writable folder)")
    if probe == out:  # it exists: a real write (access() says yes to root, also where writes fail)
        test = out / f".write-check-{os.getpid()}"
        try:
            test.write_bytes(b"")
            test.unlink()
        except OSError as e:
            raise OSError(f"out_dir {out} cannot be written ({e.strerror or e})") from None


def clean_stale_exports(out_dir: str | Path) -> list[str]:
    """Remove the temp / old folders of exports killed mid-way (`versions/.vNNNNNN.tmp-*`, `.old-*`; only those
    names). Run by the trainer at its start, while the server holds the out_dir's run lock. -> names removed."""
    versions = Path(out_dir) / "versions"
    if not versions.is_dir():
        return []
    stale = [p for p in versions.iterdir() if STALE_EXPORT.fullmatch(p.name) and p.is_dir() and not p.is_symlink()]
    for p in stale:
        shutil.rmtree(p, ignore_errors=True)
    return sorted(p.name for p in stale)


def export_pool(spec: ExportSpec, version: int, members: list[Member],
                params: dict[str, dict[str, torch.Tensor]], trainer_state: dict, stats: dict,
                keep: int = 3) -> Path:
    """Write the pool with `params` as `<out>/versions/v{version}` (atomic), then point latest.json at it."""
    src = Path(spec.source_pool)
    manifest = json.loads((src / "pool.json").read_text())
    out = Path(spec.out_dir)
    name = f"v{version:06d}"
    with atomic_dir(out / "versions" / name) as tmp:
        for member in members:
            entry = manifest["drafters"][member.name]
            meta_path = src / entry["path"] / "draftpool.json"
            meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {"kind": member.kind}
            meta["online"] = {"version": version, "source_pool": str(src), **stats}
            m = copy.deepcopy(member.module).cpu()
            assign(m, params[member.name])  # the version's weights and draft vocabulary
            get_kind(member.kind).write(m, tmp / member.name, spec.target, meta, source=src / entry["path"])
            entry.update(path=member.name, online={"version": version, **stats})
        # the version holds only the drafters trained here (vLLM mode and lookahead adapt one head of the pool)
        names = {m.name for m in members}
        manifest["drafters"] = {n: e for n, e in manifest["drafters"].items() if n in names}
        manifest.pop("matrix", None)  # measured on the source weights: no longer true of these
        manifest["online"] = {"version": version, "source_pool": str(src), **stats}
        (tmp / "pool.json").write_text(json.dumps(manifest, indent=2) + "\n")
        torch.save(trainer_state, tmp / "trainer_state.pt")
    atomic_write_json(out / "latest.json", {"version": version, "path": f"versions/{name}"})
    for old in sorted((out / "versions").glob("v*"))[:-keep]:  # rule: older versions go only after latest moved
        shutil.rmtree(old, ignore_errors=True)
    return out / "versions" / name
