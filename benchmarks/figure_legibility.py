"""Benchmark: how every experiment's figure reads at the width GitHub shows it (issue 95; ``iclab.report.legibility``).

    python benchmarks/figure_legibility.py --cubes ../shared/baseline/default-avx512/cubes

Each figure is drawn by its experiment's own figure code from the cube given, exactly as ``plots.save`` would
draw it (``plots.prepare``: its checks and the one-seed note first), and measured where ``save`` would write it: the
saved width, the smallest font size and the median glyph height in pixels as shown ``SHOWN_WIDTH`` wide, and the
pairs of drawn texts that overlap; each against its threshold. Nothing is written but
``benchmarks/results/figure_legibility.json``.
"""

from __future__ import annotations

import argparse
import importlib
import json
from pathlib import Path

import matplotlib
import xarray as xr

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from iclab import experiments  # noqa: E402
from iclab.report import legibility, plots  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "figure_legibility.json"


def measured_save(found: dict):
    """A stand-in for ``plots.save`` that measures the figure instead of writing it."""
    def save(fig: plt.Figure, png, cube: xr.Dataset) -> None:
        plots.prepare(fig, cube)
        found[Path(png).stem] = legibility.legibility(fig, plots.DPI)
        plt.close(fig)
    return save


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cubes", type=Path, required=True, help="a folder of <experiment>.nc cubes")
    args = parser.parse_args()
    found: dict[str, dict] = {}
    figure_modules = {}
    for name in experiments.names():
        try:
            figure_modules[name] = importlib.import_module(f"iclab.experiments.{name}.figure")
        except ModuleNotFoundError:
            continue
    for module in figure_modules.values():  # every module first: one figure may draw with another's code
        module.save = measured_save(found)
    for name, module in figure_modules.items():
        path = args.cubes / f"{name}.nc"
        if not path.is_file():
            continue
        with xr.open_dataset(path, engine="netcdf4") as cube:
            module.figure(cube.load(), f"{name}.png")
        print(name, {k: v for k, v in found[name].items() if k != "overlapping"}, flush=True)
    for measures in found.values():
        measures["fails"] = legibility.rules_failed(measures)
    result = {"cubes": str(args.cubes), "shown_width_px": legibility.SHOWN_WIDTH,
              "min_font_px": legibility.MIN_FONT_PIXELS, "min_glyph_px": legibility.MIN_GLYPH_PIXELS,
              "dpi": plots.DPI, "figures": dict(sorted(found.items()))}
    OUT.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
