"""Structural schemas of custom resources: pruning, defaulting, validation."""
