"""Structural schemas of custom resources: pruning, defaulting, validation.

Entry points: ``structural.structural_errors`` and ``defaulting.default_errors`` (CRD
validation), ``compiled.CompiledSchema`` (serving custom resources: decode, default,
validate). ``celrules*`` hold the CEL rules (x-kubernetes-validations).
"""
