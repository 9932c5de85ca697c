"""Damaged and hostile recordings: one line naming the file (and the field), nothing loaded."""
from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

from editor.model import recording as recording_module
from editor.model.recording import RecordingFormatError, load_recording, save_recording
from editor.model.simulation import Simulation, SimulationConfig

from .test_simulation_recording import _scene, _tamper


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    sim = Simulation(_scene(), "brute", seed=5, config=SimulationConfig(sleep_frames=20))
    for _ in range(30):
        sim.step()
    path = tmp_path_factory.mktemp("rec") / "good.npz"
    save_recording(sim.recording, path)
    return path


def _npy_header(shape, dtype="<f8") -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": dtype, "fortran_order": False,
                                                  "shape": shape})
    return buffer.getvalue()


def _replace_member(src, dst, name: str, payload: bytes) -> None:
    with zipfile.ZipFile(src) as old, zipfile.ZipFile(dst, "w") as new:
        for info in old.infolist():
            data = payload if info.filename == name + ".npy" else old.read(info)
            new.writestr(info.filename, data)


def _refused(path) -> str:
    with pytest.raises(RecordingFormatError) as caught:
        load_recording(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    return message


def test_a_header_claiming_a_trillion_rows_is_refused_before_allocating(saved, tmp_path):
    bad = tmp_path / "huge.npz"
    _replace_member(saved, bad, "lo", _npy_header((10 ** 12, 3)) + bytes(48))
    message = _refused(bad)
    assert "field 'lo': the header declares shape (1000000000000, 3)" in message
    assert "24,000,000,000,000 bytes) but the file holds 48 bytes" in message


def test_an_object_array_is_never_unpickled(saved, tmp_path):
    bad = tmp_path / "pickled.npz"
    _tamper(saved, bad, meta=np.array([{"a": 1}], dtype=object))
    assert "field 'meta': holds Python objects" in _refused(bad)


@pytest.mark.parametrize("keep", [0.1, 0.5, 0.9, 0.99])
def test_a_truncated_file_is_refused(saved, tmp_path, keep):
    data = saved.read_bytes()
    bad = tmp_path / "cut.npz"
    bad.write_bytes(data[:int(len(data) * keep)])
    assert "not a readable .npz recording" in _refused(bad)


def test_a_corrupted_member_names_the_field_or_file(saved, tmp_path):
    data = bytearray(saved.read_bytes())
    with zipfile.ZipFile(saved) as archive:
        info = archive.getinfo("lo.npy")
    data[info.header_offset + 30 + len(info.filename) + 200] ^= 0xFF  # inside lo's stored bytes
    bad = tmp_path / "flipped.npz"
    bad.write_bytes(bytes(data))
    message = _refused(bad)
    assert "lo" in message or "not a readable" in message


@pytest.mark.parametrize("changes, message", [
    ({"ids": np.array([-1])}, "field 'ids': ids must be in [0, "),
    ({"spawned": np.array([10 ** 6] * 1)}, "field 'spawned'"),
])
def test_id_errors_name_file_and_field(saved, tmp_path, changes, message):
    with np.load(saved) as data:
        arrays = {k: data[k] for k in data.files}
    bad = tmp_path / "ids.npz"
    if "ids" in changes:
        arrays["ids"] = arrays["ids"].copy()
        arrays["ids"][0] = -1
    else:
        frame = int(np.flatnonzero(np.diff(arrays["spawn_offsets"]) == 0)[1])
        offsets = arrays["spawn_offsets"].copy()
        offsets[frame + 1:] += 1
        spawned = np.insert(arrays["spawned"], offsets[frame], 10 ** 6)
        arrays["spawn_offsets"], arrays["spawned"] = offsets, spawned
    np.savez(bad, **arrays)
    assert message in _refused(bad)


def test_the_unpacked_size_is_bounded(saved, monkeypatch):
    monkeypatch.setattr(recording_module, "MAX_RECORDING_BYTES", 100)
    assert "the arrays unpack to more than the limit of 100 bytes" in _refused(saved)


def test_a_folder_is_one_line(tmp_path):
    folder = tmp_path / "run.npz"
    folder.mkdir()
    assert _refused(folder) == f"{folder}: cannot read: is a folder"
