"""Backend classes looked up by name come back as SpatialIndex subclasses, or a clear error."""
from __future__ import annotations

import pytest

from spatial.backend_lookup import backend_class
from spatial.contract import SpatialIndex
from spatial.errors import PluginError
from spatial.registry import Registry


def test_a_registered_backend_is_returned_as_its_class():
    registry = Registry()
    registry.load_builtins()
    cls = backend_class("octree", registry)
    assert issubclass(cls, SpatialIndex) and cls.name == "octree"
    assert cls is registry.backends["octree"]


def test_the_default_registry_is_used_when_none_is_given():
    assert backend_class("brute").name == "brute"


def test_an_unknown_name_lists_the_known_backends():
    registry = Registry()
    registry.load_builtins()
    with pytest.raises(PluginError, match=r"unknown backend 'no-such-tree' \(known: .*octree"):
        backend_class("no-such-tree", registry)


def test_an_entry_that_is_not_a_backend_class_is_named():
    registry = Registry()
    registry.backends["odd"] = dict  # bypasses add_backend's own check
    with pytest.raises(PluginError, match=r"backend 'odd' is registered as <class 'dict'>, not a "
                                          r"SpatialIndex subclass"):
        backend_class("odd", registry)
