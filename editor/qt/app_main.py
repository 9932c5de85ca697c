"""GUI entry point: ``python app.py [FILE] [--screenshot OUT.png [--report FILE.json] [--force]]
[--backend NAME] [--overlay METRIC|none] [--size WxH]``."""
from __future__ import annotations

import argparse
import sys
import time


def _parse(argv: list[str]):
    from editor.model.heatmap_metrics import METRICS
    p = argparse.ArgumentParser(prog="partition-studio", description="Partition Studio editor")
    p.add_argument("path", nargs="?", help="level to open (.json, .map, FILE.wad:MAP, .obj/.ply/.gltf; a bare "
                                            ".wad asks which map); default: the demo level")
    p.add_argument("--screenshot", metavar="OUT.png", help="render the window once, save it and exit")
    p.add_argument("--force", action="store_true", help="let --screenshot and --report overwrite existing files")
    p.add_argument("--backend", metavar="NAME", help="spatial index backend to show")
    p.add_argument("--overlay", metavar="METRIC", choices=sorted(METRICS) + ["none"],
                   help="overlay colour metric, or none to hide the tree overlay")
    p.add_argument("--report", metavar="FILE.json",
                   help="with --screenshot: write what was drawn (backend, nodes, brushes, wall "
                        "segments, triangles, entities) as JSON")
    p.add_argument("--compare", metavar="BACKEND",
                   help="with --screenshot: draw compare mode, the shown backend against BACKEND")
    p.add_argument("--split-planes", action="store_true",
                   help="draw a BSP's split planes (3D) and split lines (2D) over its nodes")
    p.add_argument("--size", metavar="WxH", default=None, help="window size, e.g. 1600x1000")
    p.add_argument("--no-gl", action="store_true", help="run without the OpenGL 3D view")
    p.add_argument("--frames", metavar="N", type=int, default=0,
                   help="simulate N frames before showing the window (timeline, heatmaps, hotspots)")
    p.add_argument("--listen", metavar="[HOST:]PORT",
                   help="listen for a running game and show its frames live (docs/live-link.md)")
    return p.parse_args(argv)


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise SystemExit(f"partition-studio: error: --size expects WxH, got {text!r}") from None
    if w < 320 or h < 240:
        raise SystemExit(f"partition-studio: error: --size must be at least 320x240, got {text}")
    return w, h


def make_application(argv0: str = "partition-studio"):
    """The QApplication, with GL contexts shared between GL widgets (set before it exists)."""
    from PySide6.QtCore import QCoreApplication, Qt
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        QCoreApplication.setAttribute(Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
        app = QApplication([argv0])
        app.setApplicationName("Partition Studio")
        app.setOrganizationName("PartitionStudio")
    return app


def run_gui(argv: list[str], launched: float | None = None) -> int:
    """Open the editor window (or take a screenshot); returns the process exit code.

    ``launched`` is the :func:`time.perf_counter` reading taken when the process reached its
    entry point; it only matters when a first-frame report is asked for
    (:mod:`editor.qt.first_frame`).
    """
    entered = time.perf_counter()
    from .first_frame import StartupMarks, report_path  # the first Qt import: counts as Qt's
    marks = StartupMarks(launched)
    marks.mark("gui_entered", at=entered)
    args = _parse(argv)
    size = _size(args.size) if args.size else None
    if args.screenshot:  # refuse a bad output before the window and the level are built
        from spatial.atomic import OutputPathError, check_output_path
        try:
            check_output_path(args.screenshot, args.force, "--screenshot")
            if args.report:
                check_output_path(args.report, args.force, "--report")
        except OutputPathError as exc:
            print(f"partition-studio: error: {exc}", file=sys.stderr)
            return 2
    from editor.blas_table import preload_blas_table
    preload_blas_table()  # before numba's first kernel load: see editor.blas_table
    warmup = _start_kernel_warmup(args)
    app = make_application()
    marks.mark("qt_application")
    from .glcheck import gl_status
    from .main_window import MainWindow

    marks.mark("modules_imported")
    gl_ok, reason = gl_status()
    from .shutdown import exit_code
    if args.screenshot:
        return exit_code(_screenshot(args, size, gl_ok and not args.no_gl, reason, warmup))
    window = MainWindow(use_gl=gl_ok and not args.no_gl)
    window.kernel_warmup = warmup
    if warmup is not None:
        app.aboutToQuit.connect(warmup.stop)  # what it cached so far stays cached
    from .kernel_readiness import start_kernel_readiness
    readiness = start_kernel_readiness(window, args.backend or "octree", warmup)
    app.aboutToQuit.connect(readiness.stop)
    if size:
        window.resize(*size)
    marks.mark("window_built")
    # a first start (cold kernel cache) shows the window at once and loads the level on a
    # worker thread while the kernels compile; a warm start loads small levels right here
    background = True if warmup is not None else None
    if not window.open_file(args.path, background=background) and window.document is None:
        if args.path is None or not window.open_file(None, background=background):
            print(f"partition-studio: error: {window.errors[-1] if window.errors else 'cannot open'}",
                  file=sys.stderr)
            return 2
    if window.document is not None:
        _apply_view_args(window, args)
    else:
        _apply_view_args_once_loaded(window, args)
    marks.mark("document_loaded")
    if args.listen:
        from .live import listen_at
        listen_at(window, args.listen)
    report_to = report_path()
    if report_to:
        from .first_frame import FirstFrameReporter
        FirstFrameReporter(window, report_to, marks)  # a child of the window, which keeps it alive
    window.show()
    marks.mark("shown")
    return exit_code(app.exec(), window)


def _start_kernel_warmup(args):
    """On a first start (empty kernel cache), compile the index kernels in a second process
    while this one compiles the level's (see :mod:`editor.warmup`); else ``None``."""
    from editor.warmup import KernelWarmup
    from spatial.registry import default_registry

    backend = args.backend or "octree"
    if backend not in default_registry().backends:
        return None  # reported by _apply_view_args
    return KernelWarmup.start_if_cold(backend)


def _apply_view_args_once_loaded(window, args) -> None:
    """:func:`_apply_view_args` when the level loading in the background arrives."""
    def apply(doc) -> None:
        window.state.document_replaced.disconnect(apply)
        _apply_view_args(window, args)
    window.state.document_replaced.connect(apply)


def _apply_view_args(window, args) -> None:
    if args.backend:
        from spatial.registry import default_registry
        if args.backend not in default_registry().backends:
            raise SystemExit(f"partition-studio: error: unknown backend {args.backend!r}; "
                             f"registered: {', '.join(sorted(default_registry().backends))}")
        window.params_panel.choose_backend(args.backend)
        window.document.stack.set_clean()  # choosing what to look at is not an edit to save
    if args.overlay == "none":
        if window.act_overlay.isChecked():
            window.act_overlay.trigger()  # the View menu's own action, as a click would
    elif args.overlay:
        window.state.set_overlay_settings(metric=args.overlay)
    if args.split_planes:
        window.overlay_panel.planes.setChecked(True)


def _screenshot(args, size, use_gl: bool, reason: str, warmup=None) -> int:
    import os
    import tempfile

    from PySide6.QtCore import QSettings

    from .main_window import MainWindow
    from .screenshot import ScreenshotError, save_screenshot, settle, write_render_report

    if not use_gl and not args.no_gl:
        print(f"partition-studio: error: cannot render the 3D view: {reason}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:  # a screenshot never changes the user's layout
        settings = QSettings(os.path.join(tmp, "settings.ini"), QSettings.Format.IniFormat)
        window = MainWindow(settings=settings, use_gl=use_gl)
        window.kernel_warmup = warmup
        from .prompts import UnattendedPrompts
        window.prompts = UnattendedPrompts(window)  # nobody is there to answer a dialog
        window.ask_save = lambda: "discard"
        window.resize(*(size or (1600, 1000)))
        if not window.open_file(args.path, background=False):
            print(f"partition-studio: error: {window.errors[-1]}", file=sys.stderr)
            return 2
        _apply_view_args(window, args)
        window.show()
        if args.frames > 0:
            from .timeline import show_frames
            show_frames(window, args.frames)
        settle(10)
        window.frame_all()
        settle(10)
        window.stats_panel.refresh(force=True)  # the figures now, not when a worker or timer gets to them
        try:
            if args.compare:  # compare mode instead of the editor (editor/qt/compare/screenshot.py)
                from .compare.screenshot import compare_render_report, open_for_screenshot
                shown = open_for_screenshot(window, args.compare)
                save_screenshot(shown, args.screenshot)
                if args.report:
                    write_render_report(window, args.report, compare=compare_render_report(shown))
            else:
                save_screenshot(window, args.screenshot)
                if args.report:
                    write_render_report(window, args.report)
        except ScreenshotError as exc:
            print(f"partition-studio: error: {exc}", file=sys.stderr)
            return 1
        window.close()
    return 0
