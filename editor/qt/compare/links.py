"""What the two views of compare mode share: the camera, and the tools' ray and frustum.

The selection needs no link: both sides show the one document, whose selection it is. The
tools act on the editor's own state (a ray drawn in either compare view is the editor's ray);
:class:`QueryLink` runs that ray and that frustum through each side's index too, so both
views show the same query answered by their own tree.
"""
from __future__ import annotations


def link_cameras(views) -> None:
    """Pan and zoom of any of ``views`` (2D views) moves all of them."""
    first = views[0].vb
    for view in views[1:]:
        view.vb.setXLink(first)
        view.vb.setYLink(first)


class QueryLink:
    """Copies the editor's ray and frustum queries to every side state."""

    def __init__(self, main_state, sides) -> None:
        self.main = main_state
        self.sides = list(sides)
        main_state.queries_changed.connect(self.sync)

    def close(self) -> None:
        self.main.queries_changed.disconnect(self.sync)

    def sync(self) -> None:
        """Give every side the editor's current ray and frustum (or none)."""
        ray, frustum = self.main.ray, self.main.frustum
        for side in self.sides:
            if side.document is None:
                continue
            if ray is None and frustum is None:
                side.clear_queries()
                continue
            if ray is not None:
                side.cast_ray(ray.origin, ray.direction, ray.max_t)
            else:
                side.ray = None
            side.set_frustum(frustum.shot if frustum is not None else None)
