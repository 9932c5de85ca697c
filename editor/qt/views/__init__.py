"""The level views: a 3D perspective view (OpenGL) and 2D orthographic views (top, front, side)."""
