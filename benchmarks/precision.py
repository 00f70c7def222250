"""What `dtype: auto` sees on this machine: the probe's figures, fresh, and the choice per use.

    python -m benchmarks.precision [--target smollm2-135m-instruct] [--repeats 15] [--out runs/bench/precision]

The probe of draftpool/precision.py (one decoder layer's linear maps of the target, fp32 and bf16, at 1, 8 and 64
rows; median of --repeats), measured now rather than read from the machine's cache, beside the CPU's bf16 flags and
what `auto` picks for each use (decode: 1 and 8 rows; batch: 64 rows) with these figures and with the machine's
cached ones. Writes results.json and table.md to --out. The stage figures (decoding, self-distillation, the feature
cache) come from benchmarks.decode --dtype, benchmarks.datagen_backends --engine-bf16 and benchmarks.feature_cache
--dtype: docs/precision.md.
"""

from __future__ import annotations

import json

from benchmarks import harness
from draftpool.config import ConfigError


def main(argv: list[str] | None = None) -> dict:
    import torch
    from transformers import AutoConfig

    from draftpool import precision
    from draftpool.target import dtype_name

    ap = harness.parser("benchmarks.precision", __doc__)
    harness.add_common(ap, out="runs/bench/precision")
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args(argv)
    if args.repeats < 1:
        raise ConfigError(f"--repeats must be >= 1, got {args.repeats}")
    info = harness.resolve(args)
    config = AutoConfig.from_pretrained(info.path)
    config = getattr(config, "text_config", config)
    figs = precision.probe(config, rows=tuple(sorted({n for rows in precision.USES.values() for n in rows})),
                           repeats=args.repeats)
    units = precision.cpu_has_bf16()
    report = {
        "target": info.name, "cpu_flags": sorted(precision.cpu_flags() & {"avx2", "avx512f", "avx512_bf16",
                                                                          "amx_bf16", "amx_tile"}),
        "bf16_units": units, "threads": torch.get_num_threads(), "probe_ms": figs,
        "ratio_bf16_over_fp32": {n: figs["bfloat16"][n] / figs["float32"][n] for n in figs["float32"]},
        "choice_on_these_figures": {u: dtype_name(precision.choose(figs, u)) for u in precision.USES},
        "auto": {u: dtype_name(precision.cpu_dtype(config, u)) for u in precision.USES},
        "machine": harness.machine(torch.device("cpu"), torch.float32),
    }
    rows = [[n, f"{figs['float32'][n]:.3f}", f"{figs['bfloat16'][n]:.3f}", f"{report['ratio_bf16_over_fp32'][n]:.2f}x",
             ", ".join(u for u, r in precision.USES.items() if n in r)] for n in figs["float32"]]
    table = harness.markdown_table(["rows", "fp32 ms", "bf16 ms", "bf16 / fp32 time", "use"], rows)
    table += (f"\n\nbf16 units: {units} ({', '.join(report['cpu_flags'])}); auto: "
              + ", ".join(f"{u} {d}" for u, d in report["auto"].items()) + "\n")
    harness.write_results(args.out, report, table)
    print(table)
    print(json.dumps(report["auto"]))
    return report


if __name__ == "__main__":
    raise SystemExit(harness.cli(main))
