"""CEL cost: CRD validation rules, compiled once and evaluated on every write.

    python benchmarks/celbench.py [--rounds 2000]

A custom resource whose spec carries five typical rules (a comparison, a string check, a
list check, a map check and a quantity check).  Prints the microseconds per rule evaluation
when the five share one activation (as a schema node's rules do), the whole
``CompiledRules.validate`` per object, and the compile time per rule (including building the
schema's types and environment the first time).
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from platform_api.apiextensions.schema.celrules import compile_schema
from platform_api.cel import activation

RULES = [
    {"rule": "self.minReplicas <= self.replicas", "message": "min above replicas"},
    {"rule": "self.image.startsWith('registry.example.com/')"},
    {"rule": "self.ports.all(p, p > 0 && p < 65536)"},
    {"rule": "!has(self.labels) || self.labels.size() <= 10"},
    {"rule": "quantity(self.memory).isLessThan(quantity('64Gi'))"},
]

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "x-kubernetes-validations": RULES,
            "properties": {
                "replicas": {"type": "integer"},
                "minReplicas": {"type": "integer"},
                "image": {"type": "string", "maxLength": 256},
                "ports": {"type": "array", "maxItems": 16, "items": {"type": "integer"}},
                "labels": {
                    "type": "object",
                    "maxProperties": 64,
                    "additionalProperties": {"type": "string", "maxLength": 63},
                },
                "memory": {"type": "string", "maxLength": 32},
            },
        }
    },
}

OBJECT = {
    "apiVersion": "example.com/v1",
    "kind": "App",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {
        "replicas": 3,
        "minReplicas": 1,
        "image": "registry.example.com/web:1.2",
        "ports": [80, 443],
        "labels": {"app": "web"},
        "memory": "512Mi",
    },
}


def median_us(fn: Any, rounds: int) -> float:
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(rounds):
            fn()
        samples.append((time.perf_counter() - start) / rounds * 1e6)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args()

    start = time.perf_counter()
    compiled = compile_schema(SCHEMA, "spec.versions[0].schema.openAPIV3Schema")
    first = (time.perf_counter() - start) / len(RULES) * 1e6
    assert compiled.errors == [], compiled.errors
    start = time.perf_counter()
    for _ in range(20):
        compile_schema(SCHEMA, "x")
    again = (time.perf_counter() - start) / 20 / len(RULES) * 1e6

    validator = compiled.validator
    assert validator is not None
    node = validator.properties["spec"]
    programs = [rule.program for rule in node.rules if rule.program is not None]
    act = activation({"self": OBJECT["spec"], "oldSelf": None, "@oldSelfPresent": False})

    def five_rules() -> None:
        for program in programs:
            program.eval(act)

    per_rule = median_us(five_rules, args.rounds) / len(programs)
    per_object = median_us(lambda: compiled.validate(OBJECT), args.rounds)
    errors, _ = compiled.validate(OBJECT)
    assert errors == [], errors

    print(f"{'measure':<48} {'microseconds':>12}")
    print(f"{'rule evaluation (5 rules, shared activation)':<48} {per_rule:>12.1f}")
    print(f"{'validate() per object (5 rules + walk)':<48} {per_object:>12.1f}")
    print(f"{'compile per rule (first schema, with types)':<48} {first:>12.0f}")
    print(f"{'compile per rule (again, new schema)':<48} {again:>12.0f}")


if __name__ == "__main__":
    main()
