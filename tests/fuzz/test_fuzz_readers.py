"""Every reader, fed whole structured files: each is loaded or refused with one located line.

The property for every example: the reader returns a result, or raises exactly one
:class:`~spatial.errors.PartitionStudioError` whose message is one line naming the file (and,
for text formats, ``line:column`` inside the file). No other exception escapes, and each example
finishes within the deadline (a loop over a cyclic node graph would not).
"""
from __future__ import annotations

import re
import tempfile
import zipfile
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from editor.model.frame_format import load_frame_lines
from editor.model.loading import load_document
from editor.model.recording import load_recording, save_recording
from editor.model.simulation import Simulation, SimulationConfig
from plugins.quake_map.syntax import parse_map
from spatial.errors import ParseError, PartitionStudioError
from spatial.tuned_params import load_params_document

from . import strategies as fuzz

FUZZ = settings(max_examples=300, deadline=timedelta(seconds=5),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.large_base_example])


def loaded_or_refused(path: Path, load, located: bool = False):
    """Run ``load(path)``; a refusal must be one line naming the file (and a position)."""
    try:
        result = load(path)
    except PartitionStudioError as exc:
        message = str(exc)
        event(f"refused: {type(exc).__name__}: {message[len(str(path)):][:28]}")
        assert "\n" not in message and "\r" not in message, message[:300]
        assert str(path) in message, message[:300]
        assert len(message) < 1000, message[:300]
        if located and isinstance(exc, ParseError) and exc.line:
            assert re.match(re.escape(str(path)) + r"(:\w+)?:\d+:\d+: ", message), message[:300]
        return exc
    event("loaded")
    return result


def _write(folder: str, name: str, content: str | bytes) -> Path:
    path = Path(folder) / name
    if isinstance(content, str):
        path.write_bytes(content.encode("utf-8", "surrogatepass"))
    else:
        path.write_bytes(content)
    return path


@FUZZ
@given(fuzz.quake_maps(), fuzz.LINE_ENDINGS)
def test_quake_maps_load_or_are_refused_at_the_same_place_whatever_the_line_ending(drawn, ending):
    lines, final = drawn
    with tempfile.TemporaryDirectory() as folder:
        outcomes = []
        for eol in ("\n", ending):
            text = eol.join(lines) + (eol if final else "")
            outcomes.append(loaded_or_refused(_write(folder, "fuzz.map", text), load_document,
                                              located=True))
    unix, other = outcomes
    if isinstance(unix, ParseError) or isinstance(other, ParseError):
        assert isinstance(unix, ParseError) and isinstance(other, ParseError)
        assert (unix.line, unix.column) == (other.line, other.column)
        assert unix.detail == other.detail
    elif isinstance(unix, PartitionStudioError) or isinstance(other, PartitionStudioError):
        assert type(unix) is type(other)  # the same refusal, e.g. an open brush
    else:
        assert len(unix.objects) == len(other.objects)


@FUZZ
@given(fuzz.quake_maps())
def test_a_quake_map_parses_the_same_from_text_and_bytes(drawn):
    lines, final = drawn
    text = "\n".join(lines) + ("\n" if final else "")
    try:
        expected = parse_map(text, "x.map")
    except ParseError as exc:
        with pytest.raises(ParseError) as caught:
            parse_map(text.encode("utf-8", "surrogatepass"), "x.map")
        if "not UTF-8" not in str(caught.value):
            assert (caught.value.line, caught.value.column) == (exc.line, exc.column)
    else:
        assert parse_map(text.encode(), "x.map") == expected


@FUZZ
@given(fuzz.wad_files())
def test_wads_with_random_directories_and_node_graphs(data):
    with tempfile.TemporaryDirectory() as folder:
        path = _write(folder, "fuzz.wad", data)
        loaded_or_refused(path, load_document)


# name: (strategy, file name, reader, whether refusals carry line:column)
TEXT_READERS = {
    "obj meshes with bad indices and numbers": (fuzz.obj_files(), "fuzz.obj", load_document, True),
    "ply meshes with bad indices and numbers": (fuzz.ply_files(), "fuzz.ply", load_document, False),
    "native scenes with extreme nesting and numbers": (fuzz.native_scenes(), "fuzz.json",
                                                       load_document, True),
    "frame lines with extreme nesting and numbers": (fuzz.frame_line_files(), "fuzz.jsonl",
                                                     load_frame_lines, True),
    "params files with extreme nesting and numbers": (fuzz.params_files(), "params.json",
                                                      load_params_document, False),
}


@pytest.mark.parametrize("reader", TEXT_READERS)
@FUZZ
@given(data=st.data())
def test_text_files_load_or_are_refused(reader, data):
    strategy, name, load, located = TEXT_READERS[reader]
    text = data.draw(strategy)
    with tempfile.TemporaryDirectory() as folder:
        result = loaded_or_refused(_write(folder, name, text), load, located=located)
    if name.endswith(".ply") and not isinstance(result, PartitionStudioError):
        assert len(result.triangle_ids()) > 0


@pytest.fixture(scope="module")
def recording_bytes(tmp_path_factory) -> bytes:
    from tests.model.test_simulation_recording import _scene

    sim = Simulation(_scene(), "brute", seed=3, config=SimulationConfig(sleep_frames=10))
    for _ in range(15):
        sim.step()
    path = tmp_path_factory.mktemp("fuzz") / "good.npz"
    save_recording(sim.recording, path)
    return path.read_bytes()


@FUZZ
@given(data=st.data())
def test_truncated_and_damaged_recordings(recording_bytes, data):
    raw = bytearray(recording_bytes)
    action = data.draw(st.sampled_from(["truncate", "flip", "header"]))
    if action == "truncate":
        raw = raw[:data.draw(st.integers(0, len(raw)))]
    elif action == "flip":
        for _ in range(data.draw(st.integers(1, 8))):
            raw[data.draw(st.integers(0, len(raw) - 1))] ^= data.draw(st.integers(1, 255))
    with tempfile.TemporaryDirectory() as folder:
        path = _write(folder, "fuzz.npz", bytes(raw))
        if action == "header":
            member = data.draw(st.sampled_from(["ids", "lo", "frames", "meta", "offsets"]))
            shape = data.draw(st.sampled_from([(10 ** 12,), (10 ** 12, 3), (0,), (2, 2, 2)]))
            dtype = data.draw(st.sampled_from(["<f8", "<i8", "|O", "<U10"]))
            _rewrite_header(path, member, shape, dtype)
        result = loaded_or_refused(path, load_recording)
    if action == "header":
        assert isinstance(result, PartitionStudioError)


def _rewrite_header(path: Path, member: str, shape, dtype: str) -> None:
    import io

    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": dtype, "fortran_order": False,
                                                  "shape": shape})
    with zipfile.ZipFile(path) as old:
        members = {info.filename: old.read(info) for info in old.infolist()}
    members[member + ".npy"] = header.getvalue() + bytes(64)
    with zipfile.ZipFile(path, "w") as new:
        for name, payload in members.items():
            new.writestr(name, payload)
