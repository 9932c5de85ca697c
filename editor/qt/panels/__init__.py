"""Docked panels: tree overlay and backend parameters, statistics, node inspector, entity
properties, undo history, entity palette, ray and frustum results."""
