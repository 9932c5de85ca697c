"""The bounded JSON reader and every file reader that goes through it."""
from __future__ import annotations

import json

import pytest

from editor.model.frame_format import load_frame_lines
from editor.model.native import NativeFormatError, load_scene, loads_scene
from spatial.bounded_json import MAX_JSON_DEPTH, MAX_NUMBER_CHARS, loads_bounded
from spatial.errors import ParseError
from spatial.tuned_params import ParamsFormatError, load_params_document

HOSTILE = {
    "deep nesting": ("[" * 100_000, 1, MAX_JSON_DEPTH + 1, "nesting deeper than 64"),
    "5,000-digit integer": ('{"a": ' + "7" * 5000 + "}", 1, 7, "a number of 5,000 characters"),
    "400-digit float": ("[0." + "3" * 400 + "]", 1, 2, "a number of 402 characters"),
    "nesting on line 3": ("\n\n  " + "{\"a\": " * 70, 3, 3 + 6 * MAX_JSON_DEPTH, "nesting deeper"),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_json_is_refused_at_its_position(name):
    text, line, column, message = HOSTILE[name]
    with pytest.raises(ParseError) as caught:
        loads_bounded(text, "doc.json")
    assert (caught.value.line, caught.value.column) == (line, column)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_brackets_and_digits_inside_strings_do_not_count():
    text = json.dumps({"a": "[" * 500 + "9" * 500, "b": ['\\"[[[' * 100], "c": 1.5})
    assert loads_bounded(text, "ok.json") == json.loads(text)


def test_documents_at_the_limits_are_read():
    deepest = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    longest = "1" * MAX_NUMBER_CHARS
    assert loads_bounded(deepest, "x") is not None
    assert loads_bounded(f"[{longest}]", "x") == [int(longest)]


def test_bad_utf8_is_located():
    with pytest.raises(ParseError, match=r"^x.json:2:4: not UTF-8"):
        loads_bounded(b'[\n"ab\xff"]', "x.json")


@pytest.mark.parametrize("read, error", [(load_scene, NativeFormatError),
                                         (load_params_document, ParamsFormatError)])
@pytest.mark.parametrize("name", HOSTILE)
def test_scene_and_params_files_refuse_hostile_json_with_one_located_line(tmp_path, name, read,
                                                                          error):
    path = tmp_path / "document.json"
    text, line, column, message = HOSTILE[name]
    path.write_text(text)
    with pytest.raises(error) as caught:
        read(path)
    assert str(caught.value).startswith(f"{path}:{line}:{column}: {message}")


def test_a_float_too_large_to_be_finite_is_a_field_error():
    doc = {"format": "partition-studio-scene", "version": 1, "next_id": 0,
           "settings": {"backend": "brute", "params": {}, "metadata": {"scale": 1.0}},
           "entities": [], "brushes": []}
    text = json.dumps(doc).replace("1.0", "1e400")
    with pytest.raises(NativeFormatError) as caught:
        loads_scene(text, "scene.json")
    assert str(caught.value) == ("scene.json: settings.metadata.scale: expected a finite number, "
                                 "got 1e400")


FRAME = '{"frame": 0, "objects": [[1, 0, 0, 0, 1, 1, 1]]}'


@pytest.mark.parametrize("bad, column, message", [
    ('{"frame": 1, "objects": [[1, 0, 0, 0, 1, 1, ' + "9" * 5000 + "]]}", 45,
     "a number of 5,000 characters"),
    ('{"frame": 1, "objects": ' + "[" * 1000 + "]" * 1000 + "}", 24 + MAX_JSON_DEPTH,
     "nesting deeper"),
    ('{"frame": 1, "objects": [[1, 0, 0, 0, 1, 1, 1.' + "5" * 400 + "]]}", 45,
     "a number of 402 characters"),
])
def test_frame_lines_refuse_hostile_json_on_its_line(tmp_path, bad, column, message):
    path = tmp_path / "frames.jsonl"
    path.write_text("\n".join([FRAME, FRAME.replace('"frame": 0', '"frame": 1'), bad]) + "\n")
    with pytest.raises(ParseError) as caught:
        load_frame_lines(path)
    assert str(caught.value).startswith(f"{path}:3:{column}: {message}")


def test_frame_lines_report_bad_utf8_on_its_own_line(tmp_path):
    path = tmp_path / "frames.jsonl"
    path.write_bytes((FRAME + "\n" + FRAME.replace("0,", "1,", 1) + "\n").encode()
                     + b'{"frame": 2, "objects": [], "x\xff": 1}\n')
    with pytest.raises(ParseError) as caught:
        load_frame_lines(path)
    assert (caught.value.line, caught.value.column) == (3, 31)


def test_an_unterminated_string_early_does_not_hide_the_first_error(tmp_path):
    path = tmp_path / "frames.jsonl"
    path.write_text('{"frame": 0, "objects": [], "a\n' + "[" * 100 + "\n")
    with pytest.raises(ParseError) as caught:
        load_frame_lines(path)
    assert caught.value.line == 1 and "invalid JSON" in str(caught.value)
