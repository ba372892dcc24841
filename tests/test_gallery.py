"""The front page's gallery (iclab.publish.gallery): images downscaled to a palette PNG with a provenance footer, and a
manifest whose sizes, commits and config hash are checked against the files, git and hashlib."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from PIL import Image

from iclab.store.cubes import EXPERIMENT_KIND, write_cube
from iclab.errors import CubeError, UsageError
from iclab.publish.gallery import FOOTER, code_hash, figure_code_hash, make_gallery
from iclab.report.plots import GALLERY_WIDTH

RED, BLUE = (200, 30, 30), (30, 30, 200)
CONFIG = {"experiments": {"ltb_gap": {"seeds": 3}}, "threads": 1}


def two_colour_png(path: Path, width: int, height: int) -> Path:
    """Left half red, right half blue."""
    pixels = np.zeros((height, width, 3), dtype=np.uint8)
    pixels[:, : width // 2] = RED
    pixels[:, width // 2 :] = BLUE
    Image.fromarray(pixels).save(path)
    return path


def git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture(autouse=True)
def quoting_nothing_but_a_stub(monkeypatch):
    """The stub cubes here hold no experiment's variables: ltb_gap's quotes are one number of its risk's length."""
    from iclab.publish import gallery
    from iclab.report.quotes import Quote

    def stub(name, cube):
        return [Quote("points", str(cube.sizes["n"]), "the risk's length")] if name == "ltb_gap" else []

    monkeypatch.setattr(gallery, "quotes", stub)


def cube(path: Path, experiment: str) -> Path:
    write_cube(xr.Dataset({"risk": ("n", [1.0])}), path, kind=EXPERIMENT_KIND, spec={"experiment": experiment})
    return path


def test_images_are_downscaled_palette_pngs_with_a_stamp_and_the_manifest_matches_the_files(tmp_path):
    png = two_colour_png(tmp_path / "ltb_gap.png", 2 * GALLERY_WIDTH, 1000)
    manifest = make_gallery([png], [cube(tmp_path / "ltb_gap.nc", "ltb_gap")], tmp_path / "out", CONFIG,
                            ["config.yaml"])
    out = tmp_path / "out" / "ltb_gap.png"
    with Image.open(out) as image:
        assert image.mode == "P" and image.size == (GALLERY_WIDTH, 500 + FOOTER)
        pixels = np.asarray(image.convert("RGB")).astype(int)
    np.testing.assert_allclose(pixels[250, GALLERY_WIDTH // 4], RED, atol=8)
    np.testing.assert_allclose(pixels[250, 3 * GALLERY_WIDTH // 4], BLUE, atol=8)
    footer = pixels[500:]
    assert (footer.sum(axis=-1) < 500).any(), "no text in the footer"
    assert (footer[:, -50:] == 255).all(), "the footer is white around the text"

    expected_hash = hashlib.sha256(json.dumps(CONFIG, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    head = git("rev-parse", "HEAD")
    edited = bool(git("status", "--porcelain", "--untracked-files=no"))
    assert manifest == json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["config"] == {"files": ["config.yaml"], "hash": expected_hash[:12]}
    assert manifest["drawn_by"] == head + "+modified" * edited
    (entry,) = manifest["images"]
    assert entry["image"] == "ltb_gap.png" and entry["cube_commit"] == head
    assert entry["bytes"] == out.stat().st_size == manifest["total_bytes"]
    assert entry["bytes"] < png.stat().st_size
    layouts = json.loads((tmp_path / "out" / manifest["layouts"]).read_text())  # the cube's record for the docs
    assert layouts == {"cube_commits": [head], "experiments": {"ltb_gap": {
        "dims": {"n": 1}, "coords": {}, "variables": {"risk": ["n"]}}}}
    quoted = json.loads((tmp_path / "out" / manifest["quotes"]).read_text())  # the numbers the docs quote
    assert quoted == {"cube_commits": [head], "drawn_by": manifest["drawn_by"],
                      "experiments": {"ltb_gap": {"points": {"text": "1", "meaning": "the risk's length"}}}}


def test_a_small_patch_of_colour_survives_the_palette_beside_a_colour_map(tmp_path):
    """A 300-colour gradient (a heatmap's colour map) and a small orange marker: the marker keeps its colour."""
    pixels = np.zeros((400, 600, 3), dtype=np.uint8)
    ramp = np.linspace(0, 1, 600)
    pixels[:] = np.stack([68 + 185 * ramp, 1 + 230 * ramp, 84 - 50 * ramp], axis=-1).astype(np.uint8)[None]
    orange = (230, 120, 0)
    pixels[190:200, 290:300] = orange
    png = tmp_path / "ltb_gap.png"
    Image.fromarray(pixels).save(png)
    make_gallery([png], [cube(tmp_path / "ltb_gap.nc", "ltb_gap")], tmp_path / "out", CONFIG, ["config.yaml"])
    with Image.open(tmp_path / "out" / "ltb_gap.png") as image:
        drawn = np.asarray(image.convert("RGB")).astype(int)
    np.testing.assert_allclose(drawn[195, 295], orange, atol=12)
    assert np.abs(drawn[:400] - pixels).max() <= 12


def test_a_narrow_figure_keeps_its_size(tmp_path):
    png = two_colour_png(tmp_path / "ltb_gap.png", 600, 300)
    make_gallery([png], [cube(tmp_path / "ltb_gap.nc", "ltb_gap")], tmp_path / "out", CONFIG, ["config.yaml"])
    with Image.open(tmp_path / "out" / "ltb_gap.png") as image:
        assert image.size == (600, 300 + FOOTER)


def test_a_figure_without_its_cube_is_refused_by_name_before_anything_is_written(tmp_path):
    pngs = [two_colour_png(tmp_path / f"{name}.png", 60, 30) for name in ("ltb_gap", "lsa_rates")]
    with pytest.raises(UsageError, match=r"no cube for the figures \['lsa_rates'\]"):
        make_gallery(pngs, [cube(tmp_path / "ltb_gap.nc", "ltb_gap")], tmp_path / "out", CONFIG, ["config.yaml"])
    assert not (tmp_path / "out").exists()


COLUMNS = "experiment,kind,claim,measured,relation,expected,margin,verdict,holm_verdict,seeds"
ROWS = [  # a hand-made claims.csv: two rows of ltb_gap (one a closed form), one of an experiment without a figure
    "ltb_gap,claim,LTB reaches the GD-β optimum,1.4228,≈,1.4221,0.072,holds,holds,3",
    "ltb_gap,verification,the closed form matches Monte Carlo,0.51,≈,0.5,0.02,inconclusive,—,0",
    "lsa_rates,claim,slope in M is −1,-1.01,≈,-1,0.1,fails,fails,2",
]


def claims_files(tmp_path: Path) -> Path:
    table = tmp_path / "claims.md"
    table.write_text("| claim | verdict |\n|---|---|\n| LSA learns Γ⁻¹ | holds |\n")
    table.with_suffix(".csv").write_text("\n".join([COLUMNS, *ROWS]) + "\n")
    return table


def test_the_figures_page_quotes_each_figures_claims_with_the_tables_verdicts(tmp_path):
    png = two_colour_png(tmp_path / "ltb_gap.png", 60, 30)
    manifest = make_gallery([png], [cube(tmp_path / "ltb_gap.nc", "ltb_gap")], tmp_path / "out", CONFIG,
                            ["config.yaml"], claims=claims_files(tmp_path))
    page = (tmp_path / "out" / manifest["figures_page"]).read_text()
    quoted = [line for line in page.splitlines() if line.startswith("- **")]
    assert quoted == [
        "- **holds** (Holm: holds) · LTB reaches the GD-β optimum: measured 1.423 ≈ expected 1.422 (margin 0.072; "
        "3 seeds)",
        "- **inconclusive** (a verification of the theory's computation) · the closed form matches Monte Carlo: "
        "measured 0.51 ≈ expected 0.5 (margin "
        "0.02; closed form or Monte Carlo only)",
    ]
    assert "![ltb_gap](ltb_gap.png)" in page and "lsa_rates" not in page and manifest["drawn_by"] in page


def test_the_claims_table_is_copied_under_a_line_naming_the_commit_and_config(tmp_path):
    table = claims_files(tmp_path)
    png = two_colour_png(tmp_path / "ltb_gap.png", 60, 30)
    manifest = make_gallery([png], [cube(tmp_path / "ltb_gap.nc", "ltb_gap")], tmp_path / "out", CONFIG,
                            ["config.yaml"], claims=table)
    header, copied = (tmp_path / "out" / "claims.md").read_text().split("\n\n", 1)
    assert copied == table.read_text() and manifest["claims"] == "claims.md"
    assert manifest["drawn_by"] in header and manifest["config"]["hash"] in header and "config.yaml" in header
    with pytest.raises(UsageError, match="--claims .*nope.md: no .*nope.md; make it first"):
        make_gallery([png], [tmp_path / "ltb_gap.nc"], tmp_path / "again", CONFIG, ["config.yaml"],
                     claims=tmp_path / "nope.md")
    assert not (tmp_path / "again").exists()


def test_a_cube_of_another_experiment_is_refused(tmp_path):
    png = two_colour_png(tmp_path / "ltb_gap.png", 60, 30)
    wrong = cube(tmp_path / "ltb_gap.nc", "lsa_rates")
    with pytest.raises(CubeError, match="a cube of experiment 'lsa_rates', not 'ltb_gap'"):
        make_gallery([png], [wrong], tmp_path / "out", CONFIG, ["config.yaml"])


REPO = Path(__file__).resolve().parents[1]


def stale_images(manifest: dict) -> list[str]:
    """The gallery's images whose figure code (``figure_code``: a hash of the figure's modules and iclab.report.plots)
    differs from this checkout's: drawn by other code than the figure's now."""
    return [f"{image['image']} (drawn by figure code {image.get('figure_code')}, the checkout's is {now})"
            for image in manifest["images"]
            if image.get("figure_code") != (now := figure_code_hash(image["image"].removesuffix(".png")))]


def test_the_figure_codes_hash_tells_its_files_and_contents_apart(tmp_path):
    """By hand: two files hashed in path order; a changed byte, a renamed file or a file left out changes it."""
    (tmp_path / "b.py").write_text("x = 1")
    (tmp_path / "a.py").write_text("y = 2")
    files = [tmp_path / "b.py", tmp_path / "a.py"]
    expected = hashlib.sha256(b"a.py\0y = 2\0b.py\0x = 1\0").hexdigest()[:16]
    assert code_hash(files, tmp_path) == expected
    assert code_hash([tmp_path / "a.py"], tmp_path) != expected
    (tmp_path / "a.py").write_text("y = 3")
    assert code_hash(files, tmp_path) != expected
    experiments = REPO / "src" / "iclab" / "experiments"  # probe_illconditioned's figure imports probe_similarity's
    figure = [experiments / "probe_illconditioned" / "figure.py", experiments / "probe_similarity" / "figure.py",
              experiments / "probe_layers" / "__init__.py", experiments.parent / "report" / "plots.py"]
    assert figure_code_hash("probe_illconditioned") == code_hash(figure, experiments.parents[1])
    assert figure_code_hash("probe_illconditioned") != code_hash(figure[:-1], experiments.parents[1])


def test_the_gallery_was_drawn_by_each_figures_code_as_it_is_now():
    """Planted: an image recorded with another hash is stale; then the committed gallery itself."""
    manifest = json.loads((REPO / "docs" / "gallery" / "manifest.json").read_text())
    assert not manifest["drawn_by"].endswith("+modified"), "the gallery was drawn from a checkout with edits"
    current = figure_code_hash("gdbeta_flow")
    planted = {"images": [{"image": "gdbeta_flow.png", "figure_code": "0" * 16}]}
    assert stale_images(planted) == [f"gdbeta_flow.png (drawn by figure code {'0' * 16}, the checkout's is {current})"]
    assert stale_images({"images": [{"image": "gdbeta_flow.png", "figure_code": current}]}) == []
    assert stale_images(manifest) == [], "redraw: `snakemake --cores 2 gallery --forcerun gallery` after a run"


def test_the_gallerys_own_folder_does_not_mark_its_drawing_modified(tmp_path):
    """Snakemake removes a job's outputs before the job: a committed gallery being redrawn must not read as edited
    code. In a repository of two tracked files: the gallery's image removed, the drawing is clean; the code edited,
    it is marked."""
    from iclab.publish.gallery import drawing_commit

    repo = tmp_path / "repo"
    (repo / "docs" / "gallery").mkdir(parents=True)
    (repo / "src").mkdir()
    (repo / "docs" / "gallery" / "a.png").write_text("image")
    (repo / "src" / "figure.py").write_text("code")
    for command in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]):
        subprocess.run(["git", *command], cwd=repo, check=True, capture_output=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    (repo / "docs" / "gallery" / "a.png").unlink()
    assert drawing_commit(repo / "docs" / "gallery", code=repo / "src") == head
    assert drawing_commit(tmp_path / "elsewhere", code=repo / "src") == head + "+modified"
    (repo / "src" / "figure.py").write_text("edited")
    assert drawing_commit(repo / "docs" / "gallery", code=repo / "src") == head + "+modified"
