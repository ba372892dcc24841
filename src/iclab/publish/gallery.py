"""The front page's gallery: a run's figures, downscaled for a repository and stamped with what made them.

Each figure's PNG is resized to at most ``GALLERY_WIDTH`` pixels wide, reduced to a 256-colour palette and given a
footer line naming the commit that drew it, the commit that made its cube and the run's config. The figures are
flat colour, so the palette keeps the text sharp at a fraction of the size; maximum-coverage quantisation keeps a
small patch of a colour beside a heatmap (measured on the default figures: at most 35 of 765 off on any pixel,
against 165 with median cut). ``manifest.json`` beside the images lists the same per image, with its size and the total;
``cubes.json`` records each cube's dimensions, coordinates and variables (docs/cubes.md's blocks are written from it),
``quotes.json`` the numbers the docs quote from each cube (``iclab.report.quotes``; the pages' ``quote`` blocks).
With the run's claims table, ``README.md`` beside them shows each figure under its experiment's claims, each quoted
with its verdict from the table's CSV (made here, never typed).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from PIL import Image, ImageDraw, ImageFont

from iclab.atomic import atomic_write
from iclab.report.claims_report import NO_SEEDS, number
from iclab.report.plots import GALLERY_WIDTH
from iclab.store.cubes import EXPERIMENT_KIND, read_cube
from iclab.errors import UsageError
from iclab.experiments import product_code, quotes
from iclab.hashing import spec_hash

FOOTER = 28  # pixels of the stamp line
MANIFEST = "manifest.json"
LAYOUTS = "cubes.json"  # each experiment cube's dimensions, coordinates and variables (docgallery reads it)
QUOTES = "quotes.json"  # each experiment's quoted numbers (iclab.report.quotes; iclab.publish.docblocks reads it)
CLAIMS = "claims.md"
FIGURES_PAGE = "README.md"


def drawing_commit(out_dir: Path, code: Path = Path(__file__).parent) -> str:
    """The commit of the code drawing the gallery (the checkout holding ``code``), marked ``+modified`` where tracked
    files differ from it, the gallery's own ``out_dir`` aside (Snakemake removes a job's outputs before it runs it: a
    committed gallery being redrawn is always "modified")."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=code, capture_output=True, text=True)
    if head.returncode != 0:
        return "unknown"
    top = Path(subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=code, capture_output=True,
                              text=True).stdout.strip()).resolve()
    out = Path(out_dir).resolve()
    aside = [f":(top,exclude){out.relative_to(top)}"] if out.is_relative_to(top) else []  # git refuses outside paths
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ":/", *aside], cwd=code,
                            capture_output=True, text=True, check=True)
    commit = head.stdout.strip()
    return commit + "+modified" if status.stdout.strip() else commit


def code_hash(files: Sequence[Path], root: Path) -> str:
    """A hash of ``files``' paths (relative to ``root``) and contents, in path order."""
    digest = hashlib.sha256()
    for path in sorted(files, key=lambda p: str(Path(p).relative_to(root))):
        digest.update(str(Path(path).relative_to(root)).encode() + b"\0" + Path(path).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def figure_code_hash(name: str) -> str:
    """The hash of the code drawing experiment ``name``'s figure: its figure module, the experiment modules it
    imports, and ``iclab.report.plots`` (every figure draws through it). The manifest records it per image; a test
    compares it with the checkout's, so a figure's code changed after the gallery was drawn is caught."""
    package = Path(__file__).parents[1]  # iclab
    return code_hash(sorted({*product_code(name, "figure"), package / "report" / "plots.py"}), package.parent)


def stamp_line(name: str, drawn_by: str, cube_commit: str, config: dict[str, str]) -> str:
    return (
        f"iclab · {name} · drawn at {drawn_by[:10]}{'+modified' * drawn_by.endswith('+modified')} · "
        f"cube made at {cube_commit[:10]} · "
        f"config {', '.join(config['files'])} (resolved {config['hash']})"
    )


def gallery_image(png: Path, line: str, out: Path) -> int:
    """``png`` downscaled, on a white background, with ``line`` in a footer, as a palette PNG at ``out``; its bytes."""
    with Image.open(png) as image:
        image = image.convert("RGB")
    if image.width > GALLERY_WIDTH:
        height = round(image.height * GALLERY_WIDTH / image.width)
        image = image.resize((GALLERY_WIDTH, height), Image.Resampling.LANCZOS)
    framed = Image.new("RGB", (image.width, image.height + FOOTER), "white")
    framed.paste(image, (0, 0))
    ImageDraw.Draw(framed).text((8, image.height + 6), line, fill=(90, 90, 90), font=ImageFont.load_default(size=14))
    palette = framed.quantize(colors=256, method=Image.Quantize.MAXCOVERAGE, dither=Image.Dither.NONE)
    atomic_write(out, lambda tmp: palette.save(tmp, optimize=True))
    return out.stat().st_size


def copy_claims(table: Path, out: Path, drawn_by: str, config: dict[str, str]) -> str:
    """The claims table ``table`` at ``out``, under a line naming the commit that copied it and the config."""
    header = (f"*The claims table of the run the gallery shows: copied at {drawn_by}, config "
              f"{', '.join(config['files'])} (resolved {config['hash']}); see [the claims page](../claims.md).*\n\n")
    atomic_write(out, lambda tmp: tmp.write_text(header + table.read_text()))
    return out.name


def shown(value: float) -> str:
    return number(value) if pd.notna(value) else "—"


def claim_line(row: pd.Series) -> str:
    """One claims-table row as the figures page quotes it: verdict (and Holm's), claim, measured against expected."""
    seeds = NO_SEEDS if row.seeds == 0 else f"{row.seeds} seed{'s' * (row.seeds != 1)}"
    judged = "a verification of the theory's computation" if row.kind == "verification" else f"Holm: {row.holm_verdict}"
    return (f"- **{row.verdict}** ({judged}) · {row.claim}: measured {shown(row.measured)} "
            f"{row.relation} expected {shown(row.expected)} (margin {shown(row.margin)}; {seeds})")


def figures_page(names: Sequence[str], table: pd.DataFrame, drawn_by: str, config: dict[str, str]) -> str:
    """The gallery's page: each figure under its experiment's rows of the claims ``table``, verdicts as judged."""
    lines = ["# The gallery: each figure and what the run's claims table says of it", "",
             f"*Made by `snakemake --cores 2 gallery` from the run's claims table at {drawn_by}, config "
             f"{', '.join(config['files'])} (resolved {config['hash']}): each line quotes a row of "
             f"[claims.md]({CLAIMS}) with its verdict; see [the claims page](../claims.md) for how they are judged.*",
             ""]
    for name in names:
        rows = table[table.experiment == name]
        lines += [f"## {name}", "", f"![{name}]({name}.png)", ""]
        lines += [claim_line(row) for _, row in rows.iterrows()] or ["- no claim of this experiment in the table"]
        lines.append("")
    return "\n".join(lines)


def write_json(path: Path, record: dict) -> None:
    atomic_write(path, lambda tmp: tmp.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n"))


def cube_layout(cube) -> dict[str, Any]:
    """An experiment cube's dimensions (with sizes), coordinates (their values, as JSON) and variables (their
    dimensions), in the cube's order."""
    return {"dims": {dim: int(size) for dim, size in cube.sizes.items()},
            "coords": {name: cube[name].values.tolist() for name in cube.coords if cube[name].ndim == 1},
            "variables": {name: list(cube[name].dims) for name in cube.data_vars}}


def make_gallery(
    figures: Sequence[Path],
    cubes: Sequence[Path],
    out_dir: Path,
    config: dict[str, Any],
    config_files: list[str],
    claims: Path | None = None,
) -> dict[str, Any]:
    """Write each figure's gallery image into ``out_dir`` (the cube of the same name gives its provenance), every
    cube's layout and quoted numbers (``cubes``: the figures' and the tables' experiments) for the docs, the run's
    claims table (``claims``, a claims.md, its claims.csv beside it) under a line naming the same with the figures
    page quoting its verdicts, and the manifest; return the manifest."""
    by_name = {Path(cube).stem: Path(cube) for cube in cubes}
    missing = [Path(png).stem for png in figures if Path(png).stem not in by_name]
    if missing:
        raise UsageError(f"--cubes has no cube for the figures {missing}: pass results/cubes/<name>.nc for each")
    for path in [] if claims is None else [Path(claims), Path(claims).with_suffix(".csv")]:
        if not path.is_file():
            raise UsageError(f"--claims {claims}: no {path}; make it first: snakemake results/tables/claims.md")
    run_config = {"files": config_files, "hash": spec_hash(config)}
    drawn_by = drawing_commit(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    read = {name: read_cube(path, kind=EXPERIMENT_KIND, experiment=name) for name, path in sorted(by_name.items())}
    layouts = {name: cube_layout(cube) for name, cube in read.items()}  # a table's cube too
    images = []
    for png in map(Path, figures):
        cube = read[png.stem]
        cube_commit = cube.attrs["iclab_git_commit"]
        line = stamp_line(png.stem, drawn_by, cube_commit, run_config)
        size = gallery_image(png, line, out_dir / png.name)
        images.append({"image": png.name, "bytes": size, "cube_commit": cube_commit,
                       "cube_spec_hash": cube.attrs["iclab_spec_hash"], "figure_code": figure_code_hash(png.stem)})
    manifest = {"drawn_by": drawn_by, "config": run_config, "total_bytes": sum(i["bytes"] for i in images),
                "images": images, "layouts": LAYOUTS, "quotes": QUOTES}
    cube_commits = sorted({cube.attrs["iclab_git_commit"] for cube in read.values()})
    write_json(out_dir / LAYOUTS, {"cube_commits": cube_commits, "experiments": layouts})
    quoted = {name: {q.name: {"text": q.text, "meaning": q.meaning} for q in quotes(name, cube)}
              for name, cube in read.items()}
    write_json(out_dir / QUOTES, {"cube_commits": cube_commits, "drawn_by": drawn_by,
                                  "experiments": {name: found for name, found in quoted.items() if found}})
    if claims is not None:
        manifest["claims"] = copy_claims(Path(claims), out_dir / CLAIMS, drawn_by, run_config)
        table = pd.read_csv(Path(claims).with_suffix(".csv"))
        page = figures_page([Path(png).stem for png in figures], table, drawn_by, run_config)
        atomic_write(out_dir / FIGURES_PAGE, lambda tmp: tmp.write_text(page))
        manifest["figures_page"] = FIGURES_PAGE
    atomic_write(out_dir / MANIFEST, lambda tmp: tmp.write_text(json.dumps(manifest, indent=2) + "\n"))
    return manifest

