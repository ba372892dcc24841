"""NetCDF cubes: atomic writes, provenance, clear errors on truncated or foreign files, merging."""

import json
import os
import subprocess
from pathlib import Path

import netCDF4
import numpy as np
import pytest
import xarray as xr
from conftest import REPO

from iclab.store.cubes import CubeError, combine, cube_spec, read_cube, write_cube


def small_cube(value=1.0, **coords):
    ds = xr.Dataset({"risk": (("learner",), [value, 2 * value])}, coords={"learner": ["a", "b"]})
    return ds.expand_dims({k: [v] for k, v in coords.items()})


def test_roundtrip_with_provenance(tmp_path: Path):
    path = tmp_path / "sub" / "cube.nc"
    spec = {"task": {"d": 3}, "nested": [1, 2]}
    write_cube(small_cube(), path, kind="evaluation", spec=spec, seed=4)
    ds = read_cube(path, kind="evaluation")
    xr.testing.assert_equal(ds.drop_attrs(), small_cube())
    assert cube_spec(ds) == spec
    assert ds.attrs["iclab_seed"] == 4
    versions = json.loads(ds.attrs["iclab_versions"])
    assert {"numpy", "torch", "xarray", "netCDF4", "python"} <= set(versions)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True)
    assert ds.attrs["iclab_git_commit"] == head.stdout.strip()  # the tests run in a checkout (CI clones one)
    assert [p.name for p in path.parent.iterdir()] == ["cube.nc"]  # no temporary left behind


def test_a_cube_names_the_machines_that_computed_it_and_its_inputs(tmp_path: Path):
    """A cube written by a process that uses torch records this CPU (its /proc/cpuinfo model name) and torch's kernel
    capability (``torch.backends.cpu``), no GPU (none initialised here); one written from inputs adds theirs: an
    evaluation of a model trained on another machine names both."""
    import torch

    write_cube(small_cube(), tmp_path / "here.nc", kind="evaluation", spec={"x": 1})
    (here,) = json.loads(read_cube(tmp_path / "here.nc").attrs["iclab_machines"])
    cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
               if line.startswith("model name"))
    assert json.loads(here) == {"cpu": cpu, "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
                                "gpu": "none"}
    elsewhere = json.dumps({"cpu": "Other CPU", "gpu": "NVIDIA H100 80GB HBM3", "torch_cpu_capability": "AVX2"})
    trained = small_cube().assign_attrs(iclab_machines=json.dumps([elsewhere]))
    write_cube(small_cube(), tmp_path / "both.nc", kind="evaluation", spec={"x": 1}, inputs=[trained])
    assert json.loads(read_cube(tmp_path / "both.nc").attrs["iclab_machines"]) == sorted([here, elsewhere])


def test_same_content_gives_identical_bytes(tmp_path: Path):
    for name in ("a.nc", "b.nc"):
        write_cube(small_cube(), tmp_path / name, kind="evaluation", spec={"x": 1})
    assert (tmp_path / "a.nc").read_bytes() == (tmp_path / "b.nc").read_bytes()


def test_failed_write_leaves_no_file(tmp_path: Path, monkeypatch):
    def broken(self, path, **kw):
        Path(path).write_bytes(b"half a file")
        raise OSError("disk full")

    monkeypatch.setattr(xr.Dataset, "to_netcdf", broken)
    with pytest.raises(OSError, match="disk full"):
        write_cube(small_cube(), tmp_path / "cube.nc", kind="evaluation", spec={})
    assert list(tmp_path.iterdir()) == []


def test_a_write_killed_mid_way_leaves_a_temporary_that_the_next_write_or_remove_leftovers_clears(tmp_path: Path):
    """SIGKILL runs no clean-up: the killed write's temporary stays beside the target (never the target itself)
    until the next write to the target, or ``remove_leftovers``; both spare the target and other files'
    temporaries."""
    import sys

    from iclab.atomic import remove_leftovers, write_text

    target, other = tmp_path / "model.pt", tmp_path / "other.pt"
    code = (
        "import os, signal, sys; from iclab.atomic import atomic_write; "
        "atomic_write(sys.argv[1], lambda tmp: (tmp.write_text('half'), os.kill(os.getpid(), signal.SIGKILL)))"
    )

    def killed_write(path: Path) -> None:
        assert subprocess.run([sys.executable, "-c", code, str(path)], cwd=REPO).returncode == -9

    def visible() -> list[str]:
        return sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".other.pt."))

    for path in (target, other):
        killed_write(path)
    (tmp_path / "model.pt.nc").write_text("another target")
    assert not target.exists() and len(list(tmp_path.glob(".model.pt.*.tmp.pt"))) == 1

    write_text(target, "done")
    assert visible() == ["model.pt", "model.pt.nc"] and target.read_text() == "done"
    killed_write(target)
    assert len(list(tmp_path.glob(".model.pt.*.tmp.pt"))) == 1
    remove_leftovers(target)
    assert visible() == ["model.pt", "model.pt.nc"] and target.read_text() == "done"
    assert len(list(tmp_path.glob(".other.pt.*.tmp.pt"))) == 1


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_outputs_get_the_mode_of_a_plain_open(tmp_path: Path, umask: int):
    """mkstemp alone gives 0600: a group sharing results/ could not read the cubes."""
    old = os.umask(umask)
    try:
        write_cube(small_cube(), tmp_path / "cube.nc", kind="evaluation", spec={})
        with open(tmp_path / "plain", "w"):
            pass
    finally:
        os.umask(old)
    expected = (tmp_path / "plain").stat().st_mode & 0o777
    assert expected == 0o666 & ~umask
    assert (tmp_path / "cube.nc").stat().st_mode & 0o777 == expected


def test_truncated_file_gives_a_clear_error(tmp_path: Path):
    path = tmp_path / "cube.nc"
    write_cube(small_cube(), path, kind="evaluation", spec={})
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(CubeError, match=r"cube\.nc: not a readable NetCDF file .*truncated"):
        read_cube(path)


def test_foreign_files_give_clear_errors(tmp_path: Path):
    text = tmp_path / "notes.nc"
    text.write_text("not netcdf at all")
    with pytest.raises(CubeError, match="notes.nc: not a readable NetCDF file"):
        read_cube(text)
    foreign = tmp_path / "foreign.nc"
    with netCDF4.Dataset(foreign, "w") as nc:
        nc.createDimension("x", 2)
        nc.createVariable("v", "f8", ("x",))[:] = [1.0, 2.0]
    with pytest.raises(CubeError, match="without iclab provenance"):
        read_cube(foreign)
    with pytest.raises(CubeError, match="no such file"):
        read_cube(tmp_path / "missing.nc")


def test_wrong_kind_is_named(tmp_path: Path):
    path = tmp_path / "cube.nc"
    write_cube(small_cube(), path, kind="eval_set", spec={})
    with pytest.raises(CubeError, match="an iclab 'eval_set' cube, expected a 'experiment' cube"):
        read_cube(path, kind="experiment")


def test_combine_keeps_config_order():
    parts = [small_cube(v, n=n, norm=norm) for v, (n, norm) in enumerate([(20, 3.0), (10, 0.5), (20, 0.5), (10, 3.0)])]
    merged = combine(parts, {"n": [20, 10], "norm": [3.0, 0.5]})
    assert list(merged.n.values) == [20, 10]
    assert list(merged.norm.values) == [3.0, 0.5]
    assert merged.risk.sel(n=10, norm=3.0, learner="b").item() == 2 * 3
    assert not np.isnan(merged.risk.values).any()


def test_combine_aligns_dimensions_that_differ_in_length():
    """Prefix positions run to n: only the sweep dimension may be concatenated."""
    short = xr.Dataset({"risk": (("position",), [1.0, 2.0]), "final": 2.0}, coords={"position": [0, 1]})
    long = xr.Dataset({"risk": (("position",), [3.0, 4.0, 5.0]), "final": 5.0}, coords={"position": [0, 1, 2]})
    merged = combine([short.expand_dims(n=[1]), long.expand_dims(n=[2])], {"n": [1, 2]})
    assert merged.final.dims == ("n",)
    np.testing.assert_array_equal(merged.final, [2.0, 5.0])
    np.testing.assert_array_equal(merged.risk.sel(n=1), [1.0, 2.0, np.nan])


def test_strings_of_different_lengths_survive_a_roundtrip_through_combine(tmp_path: Path):
    """Encodings read from one input (a 15-character string width) must not truncate longer labels."""
    paths = []
    for i, name in enumerate(["a short name", "the much longer condition name"]):
        path = tmp_path / f"{i}.nc"
        write_cube(small_cube(float(i), condition=name), path, kind="evaluation", spec={"i": i})
        paths.append(path)
    merged = combine([read_cube(p) for p in paths], {"condition": ["the much longer condition name", "a short name"]})
    write_cube(merged, tmp_path / "merged.nc", kind="experiment", spec={})
    again = read_cube(tmp_path / "merged.nc")
    assert list(again.condition.values) == ["the much longer condition name", "a short name"]
    assert again.risk.sel(condition="the much longer condition name", learner="a").item() == 1.0
