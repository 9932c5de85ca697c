"""The 2D views draw brushes as one cached item per chunk of neighbouring brushes: an edit
re-rasterises only the chunks it touched, the window repaints only their patches, and what is
drawn equals a view built from scratch."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QEvent, QObject, QRectF, Qt
from PySide6.QtGui import QRegion

from editor.model import Scene, SetSelection
from editor.model.brushes import build_solids
from editor.model.scene import Edit
from editor.model.shapes import box_brush
from editor.qt.views.brush_outlines import CHUNK_SIZE, BrushOutlines, morton_codes

PITCH = 96.0   # lattice spacing of the test brushes
SIDE = 32.0    # their size: a nudge of one 64-unit grid step leaves the old place empty


def _lattice_scene(per_side: int = 22) -> Scene:
    """Small box brushes on a square lattice, far apart (several chunks' worth)."""
    scene = Scene()
    world = scene.allocate_ids(1)[0]
    objects = {world: _worldspawn()}
    for oid, (i, j) in zip(scene.allocate_ids(per_side * per_side),
                           [(i, j) for i in range(per_side) for j in range(per_side)]):
        lo = np.array([i * PITCH, j * PITCH, 0.0])
        objects[oid] = box_brush(world, lo, lo + SIDE)
    build_solids([o for o in objects.values() if not hasattr(o, "classname")])
    scene.apply(Edit(objects))
    return scene


def _worldspawn():
    from editor.model import brush_entity
    return brush_entity("worldspawn")


class _PaintRegions(QObject):
    """Collects the regions a widget is asked to paint."""

    def __init__(self, widget) -> None:
        super().__init__()
        self.region = QRegion()
        widget.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Paint:
            self.region = self.region.united(event.region())
        return False


def _area(region: QRegion) -> int:
    return sum(r.width() * r.height() for r in region)


def _open(window, qtbot, scene):
    from editor.model.loading import LoadResult
    window.files.adopt_loaded(LoadResult(scene, None))
    window.state.set_grid_size(64)
    window.state.flush()
    window.activateWindow()
    qtbot.waitActive(window)
    qtbot.wait(200)  # every view painted its first frame, every chunk cached


def _middle_brush(doc) -> int:
    ids = doc.scene.brush_ids()
    lo, _ = doc.scene.bounds_of(ids)
    mid = lo.mean(axis=0)
    return int(ids[int(np.argmin(np.linalg.norm(lo - mid, axis=1)))])


def test_chunks_are_compact_patches_of_the_view():
    scene = _lattice_scene()
    from editor.qt.scene_geometry import SceneGeometry
    outlines = BrushOutlines((0, 1))
    outlines.update(SceneGeometry().build(scene))
    assert len(outlines.chunks) >= 4
    assert sum(len(c.ids) for c in outlines.chunks) == len(outlines) == len(scene.brush_ids())
    level_area = (22 * PITCH) ** 2
    for chunk in outlines.chunks:
        lo, hi = scene.bounds_of(chunk.ids)
        extent = (hi[:, :2].max(axis=0) - lo[:, :2].min(axis=0)).prod()
        # a run of a Z-order curve covers a few lattice blocks, far from the whole level
        assert extent <= 0.4 * level_area, (len(chunk.ids), extent / level_area)


def test_morton_codes_interleave_the_coordinates():
    codes = morton_codes(np.array([[0, 0], [1, 0], [0, 1], [1, 1], [2, 0], [65535, 65535]]))
    assert codes.tolist() == [0, 1, 2, 3, 4, (1 << 32) - 1]


def test_arrow_key_nudge_rerasterises_only_the_touched_chunk(window, qtbot):
    _open(window, qtbot, _lattice_scene())
    doc = window.document
    oid = _middle_brush(doc)
    doc.push(SetSelection([oid]))
    qtbot.wait(100)
    x0 = float(doc.scene[oid].lo[0])
    top = window.views2d["Top"]
    before = {name: {id(item): item.paints for item in view.brushes.items()}
              for name, view in window.views2d.items()}
    regions = _PaintRegions(top.viewport())
    top.setFocus()
    qtbot.keyClick(top, Qt.Key_Right)
    qtbot.wait(200)
    assert doc.scene[oid].lo[0] == x0 + 64
    for name, view in window.views2d.items():
        touched = {id(item) for c in view.outlines.dirty for item in view.brushes.items_of(c)}
        assert {id(item) for item in view.brushes.items_of(view.outlines.chunk_of(oid))} <= touched
        assert len(touched) <= 2 * 2, name  # the old and the new chunk, fill and edges
        repainted = {key for key, item in ((id(i), i) for i in view.brushes.items())
                     if item.paints != before[name].get(key)}
        assert repainted <= touched, (name, len(repainted))
        assert repainted, f"{name}: the moved brush's chunk was drawn again"
    # the viewport repainted the brush's patch, not all of itself
    vp = top.viewport()
    assert 0 < _area(regions.region) <= 0.25 * vp.width() * vp.height(), \
        (_area(regions.region), vp.width() * vp.height())


def _brush_at(doc, lo) -> int:
    return next(i for i in doc.scene.brush_ids() if np.allclose(doc.scene[i].lo, lo))


def _grab(view) -> np.ndarray:
    from PySide6.QtGui import QImage
    image = view.viewport().grab().toImage().convertToFormat(QImage.Format_RGB32)
    width, height = image.width(), image.height()
    data = np.frombuffer(image.constBits(), dtype=np.uint8, count=image.sizeInBytes())
    return data.reshape(height, image.bytesPerLine() // 4, 4)[:, :width, :3].copy()


def _pixel_box(view, lo, hi, shrink: float = 3.0) -> tuple[slice, slice]:
    """Viewport pixel rows and columns inside the world rectangle ``lo``..``hi`` of a 2D view."""
    from tests.qt.conftest import view_pos
    a = view_pos(view, lo[0], lo[1])
    b = view_pos(view, hi[0], hi[1])
    x0, x1 = sorted((a.x(), b.x()))
    y0, y1 = sorted((a.y(), b.y()))
    return slice(int(y0 + shrink), int(y1 - shrink)), slice(int(x0 + shrink), int(x1 - shrink))


def test_a_nudged_brush_is_drawn_at_its_new_place_only(window, qtbot):
    _open(window, qtbot, _lattice_scene())
    window.state.set_overlay_visible(False)
    window.state.set_show_grid(False)
    doc = window.document
    oid = _middle_brush(doc)
    top = window.views2d["Top"]
    lo, hi = doc.scene[oid].lo.copy(), doc.scene[oid].hi.copy()
    # zoom onto the brush and the gap it moves into
    top.vb.setRange(QRectF(lo[0] - PITCH / 2, lo[1] - PITCH / 2, 2 * PITCH, PITCH * 1.5), padding=0)
    qtbot.wait(200)
    old_rows, old_cols = _pixel_box(top, lo, hi)
    new_lo, new_hi = lo + [64, 0, 0], hi + [64, 0, 0]
    new_rows, new_cols = _pixel_box(top, new_lo, new_hi)
    image = _grab(top)
    empty = image[new_rows, new_cols].reshape(-1, 3).mean(axis=0)   # the gap, before the move
    assert top.outlines.chunk_of(oid) is not top.outlines.chunk_of(_brush_at(doc, lo + [PITCH, 0, 0]))
    filled = image[old_rows, old_cols].reshape(-1, 3).mean(axis=0)  # the brush's faint fill
    assert np.abs(filled - empty).max() >= 3, "the brush fill shows against the background"
    doc.push(SetSelection([oid]))
    top.setFocus()
    qtbot.keyClick(top, Qt.Key_Right)
    doc.push(SetSelection([]))  # the highlight off, to see the brush itself
    assert doc.scene[oid].lo[0] == lo[0] + 64
    qtbot.wait(200)
    after = _grab(top)
    # the brush moved into its right-hand neighbour's chunk, which grew to the left: a reused
    # pixmap cache once drew that neighbour shifted and cut
    assert top.outlines.chunk_of(oid) is top.outlines.chunk_of(_brush_at(doc, lo + [PITCH, 0, 0]))
    np.testing.assert_allclose(after[old_rows, old_cols].reshape(-1, 3).mean(axis=0), empty, atol=1.0)
    np.testing.assert_allclose(after[new_rows, new_cols].reshape(-1, 3).mean(axis=0), filled, atol=1.0)
    # and the whole picture is what a view built from scratch draws
    top._on_scene_arrays_changed(window.state._geometry.build(doc.scene))
    qtbot.wait(200)
    scratch = _grab(top)
    assert top.outlines.rebuilt_all
    ys, xs = np.nonzero(np.abs(after.astype(int) - scratch.astype(int)).max(axis=2) > 2)
    assert not len(ys), f"{len(ys)} pixels differ, rows {ys.min()}-{ys.max()}, columns {xs.min()}-{xs.max()}"


def test_a_chunk_that_outgrows_twice_its_size_splits():
    from editor.qt.scene_geometry import SceneGeometry
    scene = _lattice_scene(per_side=12)
    geometry = SceneGeometry()
    outlines = BrushOutlines((0, 1))
    outlines.update(geometry.build(scene))
    world = scene.worldspawn_id()
    chunks_before = len(outlines.chunks)
    # pile new brushes into one spot: they all land in the chunk holding it
    new = scene.allocate_ids(2 * CHUNK_SIZE + 1)
    objects = {oid: box_brush(world, np.array([8.0 * k % 64, 8.0 * (k // 8) % 64, 0.0]),
                              np.array([8.0 * k % 64 + 8, 8.0 * (k // 8) % 64 + 8, 8.0]))
               for k, oid in enumerate(new)}
    build_solids(list(objects.values()))
    scene.apply(Edit(objects))
    arrays = geometry.update(scene, set(new))
    outlines.update(arrays)
    assert len(outlines.chunks) > chunks_before
    assert max(len(c.ids) for c in outlines.chunks) <= 2 * CHUNK_SIZE + 1
    assert len(outlines) == len(scene.brush_ids())
    assert set(outlines.outline_segments()) == set(scene.brush_ids())


def test_a_simulation_step_does_not_redraw_the_2d_axes(window, qtbot, monkeypatch):
    """Moving bodies repaint large parts of each 2D view; the axes beside them are blitted
    from their caches, not drawn again (tick labels cost more than the bodies)."""
    import pyqtgraph as pg
    drawn = []
    original = pg.AxisItem.paint

    def counting_paint(axis, *args):
        drawn.append(axis)
        return original(axis, *args)

    monkeypatch.setattr(pg.AxisItem, "paint", counting_paint)
    window.activateWindow()
    qtbot.waitActive(window)
    if not window.act_animate.isChecked():
        window.act_animate.trigger()
    for _ in range(2):  # Simulation → Step: builds the simulation, shows its docks
        qtbot.keyClick(window, Qt.Key_F10)
        qtbot.wait(400)
    ranges = [view.vb.viewRect() for view in window.views2d.values()]
    axes = {view.getAxis(side) for view in window.views2d.values() for side in ("bottom", "left")}
    drawn.clear()
    for _ in range(3):
        qtbot.keyClick(window, Qt.Key_F10)
        qtbot.wait(150)
    assert window.live_view.bodies_drawn > 0
    assert ranges == [view.vb.viewRect() for view in window.views2d.values()]
    assert not axes & set(drawn), f"{len(axes & set(drawn))} 2D axes drawn again"
