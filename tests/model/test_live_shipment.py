"""Shipments between processes: objects full of arrays, each array's bytes sent once."""
from __future__ import annotations

import multiprocessing
import threading

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from editor.model.live.shipment import MIN_SHARED_BYTES, ShipmentReader, ShipmentWriter, receive, send

BIG = MIN_SHARED_BYTES // 8 + 100  # float64 elements of an array sent out of the pickle


def _round_trip(writer: ShipmentWriter, reader: ShipmentReader, obj):
    payload, views = writer.encode(obj)
    return reader.decode(payload, [np.frombuffer(bytes(v), dtype=np.uint8).copy() for v in views])


def test_a_shipment_comes_back_equal_and_its_arrays_are_the_readers_own():
    rng = np.random.default_rng(0)
    obj = {"lo": rng.random((BIG, 3)), "ids": np.arange(BIG * 2), "small": np.ones(3),
           "nested": [rng.random(BIG), ("name", 7)], "grid": np.arange(BIG * 3).reshape(3, -1)}
    back = _round_trip(ShipmentWriter(), ShipmentReader(), obj)
    for key in ("lo", "ids", "small", "grid"):
        assert np.array_equal(back[key], obj[key]) and back[key].dtype == obj[key].dtype
        assert back[key].flags.writeable and not np.shares_memory(back[key], obj[key])
    assert np.array_equal(back["nested"][0], obj["nested"][0]) and back["nested"][1] == ("name", 7)
    back["lo"][0, 0] = -1.0  # written by the reader: the sender's array is untouched
    assert obj["lo"][0, 0] != -1.0


def test_arrays_equal_to_the_last_shipments_are_not_sent_again():
    rng = np.random.default_rng(1)
    static = rng.random((BIG, 3))
    moving = rng.random((BIG, 3))
    writer, reader = ShipmentWriter(), ShipmentReader()
    first = _round_trip(writer, reader, {"static": static, "moving": moving})
    assert writer.sent_bytes == static.nbytes + moving.nbytes and writer.reused_bytes == 0
    moved = moving + 1.0
    # the same array object, and a fresh copy of equal bytes, both referred to; the moved one sent
    second = _round_trip(writer, reader, {"static": static.copy(), "moving": moved, "again": static})
    assert writer.sent_bytes == moved.nbytes
    assert writer.reused_bytes == 2 * static.nbytes
    assert np.array_equal(second["static"], static) and np.array_equal(second["moving"], moved)
    assert second["again"] is second["static"]  # one array on the reader's side
    assert np.array_equal(first["moving"], moving)  # an earlier shipment keeps its own values


def test_nan_and_negative_zero_compare_by_their_bytes():
    values = np.full(BIG, np.nan)
    writer, reader = ShipmentWriter(), ShipmentReader()
    _round_trip(writer, reader, values)
    back = _round_trip(writer, reader, values.copy())
    assert writer.sent_bytes == 0 and np.isnan(back).all()  # NaN equals itself bitwise
    zeros = np.zeros(BIG)
    _round_trip(writer, reader, zeros)
    negative = _round_trip(writer, reader, -zeros)
    assert writer.sent_bytes == zeros.nbytes and np.signbit(negative).all()  # -0.0 is not 0.0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["<f8", "<i8", "<u4", "|b1"]),
                          st.integers(0, 3 * BIG), st.booleans()), min_size=1, max_size=6),
       st.integers(0, 2**32 - 1))
def test_any_sequence_of_shipments_comes_back_equal(spec, seed):
    rng = np.random.default_rng(seed)
    writer, reader = ShipmentWriter(), ShipmentReader()
    arrays = [rng.integers(0, 3, size).astype(dtype) for dtype, size, _ in spec]
    for _ in range(3):
        # some arrays change between shipments, some stay, some are views (not contiguous)
        arrays = [a if keep else rng.integers(0, 3, len(a)).astype(a.dtype)
                  for a, (_, _, keep) in zip(arrays, spec)]
        shipped = arrays + [a[::2] for a in arrays]
        back = _round_trip(writer, reader, shipped)
        assert len(back) == len(shipped)
        for got, want in zip(back, shipped):
            assert got.dtype == want.dtype and np.array_equal(got, want)


def test_a_shipment_crosses_a_pipe_in_one_piece_with_arrays_larger_than_its_buffer():
    """Arrays of megabytes go through the connection's descriptor in one gathered write and
    one scattered read, between a shipment's framed messages."""
    here, there = multiprocessing.Pipe()
    rng = np.random.default_rng(2)
    shipments = [{"frame": k, "boxes": rng.random((200_000, 3)), "ids": np.arange(k, 300_000 + k)}
                 for k in range(3)]
    lock, writer = threading.Lock(), ShipmentWriter()
    sender = threading.Thread(target=lambda: [send(there, lock, writer, s) for s in shipments])
    sender.start()
    reader = ShipmentReader()
    received = [receive(here, reader, here.recv()) for _ in shipments]
    sender.join(10)
    for got, want in zip(received, shipments):
        assert got["frame"] == want["frame"]
        assert np.array_equal(got["boxes"], want["boxes"]) and np.array_equal(got["ids"], want["ids"])
    here.close()
    there.close()
