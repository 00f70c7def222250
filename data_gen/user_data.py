"""User data through HF `datasets`: local jsonl/json/csv/parquet/arrow files or folders, a saved dataset, a hub id."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from draftpool.config import ConfigError, field

_BUILDERS = {".jsonl": "json", ".json": "json", ".csv": "csv", ".parquet": "parquet", ".arrow": "arrow"}


@dataclass
class UserData:
    path: str = field(help="local file/folder (jsonl, json, csv, parquet, arrow, save_to_disk) or a hub dataset id")
    split: str = field("train", help="split to read when the source has several")
    prompt_column: str = field("prompt", help="column holding the user prompt")
    response_column: str = field("", help="column holding a ready answer (then no self-distillation is run)")
    held_out_fraction: float = field(0.2, help="share of rows kept for held-out evaluation (fixed by row text)")

    def validate(self) -> None:
        if not 0.0 <= self.held_out_fraction < 1.0:
            raise ConfigError("user_data.held_out_fraction must be in [0, 1)")


def user_prompt_id(prompt: str) -> str:
    return "user-" + hashlib.sha1(prompt.encode()).hexdigest()[:12]


def user_split(prompt: str, held_out_fraction: float) -> str:
    """"held_out" or "train", fixed by the prompt's text (a sha1 bucket), so reordering rows never moves one."""
    bucket = int(user_prompt_id(prompt)[5:13], 16) % 100
    return "held_out" if bucket < round(held_out_fraction * 100) else "train"


def load_user_rows(spec: UserData, skipped: list[str] | None = None) -> list[dict[str, str]]:
    """Rows as {"prompt", "response"?, "row": 1-based row number}; one clear error for a missing source, an empty
    table or a missing column. Rows with an empty prompt are left out, one line each in `skipped`."""
    import datasets

    from draftpool.progress import quiet_datasets

    quiet_datasets()
    p = Path(spec.path)
    try:
        if p.is_dir() and any((p / m).exists() for m in ("dataset_info.json", "state.json", "dataset_dict.json")):
            ds = datasets.load_from_disk(str(p))
            if isinstance(ds, datasets.DatasetDict):
                ds = ds[spec.split]
        elif p.is_dir():
            files = sorted(f for f in p.rglob("*") if f.suffix in _BUILDERS)
            if not files:
                raise ConfigError(f"user data folder {p} holds no jsonl/json/csv/parquet/arrow file")
            ds = datasets.load_dataset(_BUILDERS[files[0].suffix], data_files=[str(f) for f in files], split="train")
        elif p.is_file():
            if p.suffix not in _BUILDERS:
                raise ConfigError(f"user data file {p}: unsupported extension (use one of {sorted(_BUILDERS)})")
            ds = datasets.load_dataset(_BUILDERS[p.suffix], data_files=str(p), split="train")
        elif spec.path.startswith((".", "/")) or spec.path.count("/") != 1:
            raise ConfigError(f"user data {spec.path!r} does not exist")
        else:
            ds = datasets.load_dataset(spec.path, split=spec.split)
    except ConfigError:
        raise
    except Exception as e:  # noqa: BLE001
        raise ConfigError(f"cannot read user data {spec.path!r}: {e}") from None
    cols = [spec.prompt_column] + ([spec.response_column] if spec.response_column else [])
    for c in cols:
        if c not in ds.column_names:
            raise ConfigError(f"user data {spec.path!r} has no column {c!r} (columns: {ds.column_names})")
    rows = []
    for n, r in enumerate(ds, start=1):
        prompt = str(r[spec.prompt_column] or "").strip()
        if not prompt:
            if skipped is not None:
                skipped.append(f"row {n}: empty prompt")
            continue
        row = {"prompt": prompt, "row": n}
        if spec.response_column:
            row["response"] = str(r[spec.response_column] or "")
        rows.append(row)
    if not rows:
        raise ConfigError(f"user data {spec.path!r} holds no non-empty prompt")
    return rows
