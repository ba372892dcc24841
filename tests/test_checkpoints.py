"""Checkpoints are data only: read with torch's weights-only loader, so a planted pickle cannot run
code; unreadable files are refused with an error naming the file."""

import pickle
from pathlib import Path

import numpy as np
import pytest
import torch

from iclab.checkpoints import load_checkpoint, save_checkpoint
from iclab.errors import CheckpointError

MARKER_NAME = "code_ran"


class Planted:
    """Unpickling this object would create a file: the exploit a checkpoint loader must refuse."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def test_round_trip_keeps_arrays_tensors_and_nesting(tmp_path: Path):
    state = {
        "job_hash": "abc",
        "step": 7,
        "losses": np.array([1.5, np.nan, 2.0]),
        "counts": np.arange(4, dtype=np.int64),
        "model": {"weight": torch.randn(2, 3)},
        "snapshots": {"steps": [0, 5], "params": {"w": [np.ones((2, 2)), np.zeros((2, 2), dtype=np.float32)]}},
        "torch_rng": torch.get_rng_state(),
        "betas": (0.9, 0.999),
    }
    path = tmp_path / "c.pt"
    save_checkpoint(path, state)
    loaded = load_checkpoint(path, "abc")
    np.testing.assert_array_equal(loaded["losses"], state["losses"])
    assert isinstance(loaded["counts"], np.ndarray) and loaded["counts"].dtype == np.int64
    torch.testing.assert_close(loaded["model"]["weight"], state["model"]["weight"])
    assert loaded["snapshots"]["params"]["w"][1].dtype == np.float32
    assert torch.equal(loaded["torch_rng"], state["torch_rng"])
    assert loaded["step"] == 7 and loaded["betas"] == (0.9, 0.999)


def test_a_pickle_that_would_run_code_is_refused_without_running_it(tmp_path: Path):
    marker, path = tmp_path / MARKER_NAME, tmp_path / "planted.pt"
    torch.save({"job_hash": "abc", "payload": Planted(marker)}, path)
    with pytest.raises(CheckpointError, match=rf"{path} is not a data-only torch file \(a pickle that could run code.*delete it"):
        load_checkpoint(path, "abc")
    assert not marker.exists()
    with open(path.with_suffix(".pkl"), "wb") as f:  # the control: plain unpickling would have run it
        pickle.dump(Planted(marker), f)
    with open(path.with_suffix(".pkl"), "rb") as f:
        pickle.load(f)
    assert marker.exists()


@pytest.mark.parametrize("content", [b"", b"not a zip file at all", None])
def test_truncated_or_foreign_files_are_refused_by_name(tmp_path: Path, content: bytes | None):
    path = tmp_path / "c.pt"
    if content is None:  # a real checkpoint cut short, as a full disk would leave it
        save_checkpoint(path, {"job_hash": "abc", "w": torch.randn(100, 100)})
        content = path.read_bytes()[: path.stat().st_size // 2]
    path.write_bytes(content)
    with pytest.raises(CheckpointError, match=rf"checkpoint {path} (cannot be read|is not a data-only torch file)"):
        load_checkpoint(path, "abc")


def test_data_without_a_job_hash_is_not_a_checkpoint(tmp_path: Path):
    path = tmp_path / "weights.pt"
    torch.save({"weight": torch.zeros(2)}, path)
    with pytest.raises(CheckpointError, match="not an iclab checkpoint"):
        load_checkpoint(path, "abc")


def test_objects_that_are_not_data_cannot_be_saved(tmp_path: Path):
    with pytest.raises(TypeError, match="cannot hold a Planted"):
        save_checkpoint(tmp_path / "c.pt", {"job_hash": "abc", "x": Planted(tmp_path / "m")})
    assert list(tmp_path.iterdir()) == []
