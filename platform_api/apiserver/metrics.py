"""``/metrics``: the few metrics the server keeps, in Prometheus' text format.

A deliberately small registry (samples keyed by name and labels) until the server
has enough metrics to warrant prometheus-client.
"""

from __future__ import annotations

from dataclasses import dataclass, field

CONTENT_TYPE = b"text/plain; version=0.0.4; charset=utf-8"


@dataclass
class Metric:
    name: str
    kind: str  # gauge or counter
    help: str
    samples: dict[tuple[tuple[str, str], ...], float] = field(default_factory=dict)

    def set(self, value: float, **labels: str) -> None:
        self.samples[tuple(sorted(labels.items()))] = value

    def inc(self, **labels: str) -> None:
        key = tuple(sorted(labels.items()))
        self.samples[key] = self.samples.get(key, 0.0) + 1


class Registry:
    def __init__(self) -> None:
        self.metrics: dict[str, Metric] = {}

    def metric(self, name: str, kind: str, help_text: str) -> Metric:
        return self.metrics.setdefault(name, Metric(name, kind, help_text))

    def render(self) -> bytes:
        lines: list[str] = []
        for metric in sorted(self.metrics.values(), key=lambda m: m.name):
            lines += [f"# HELP {metric.name} {metric.help}", f"# TYPE {metric.name} {metric.kind}"]
            for labels, value in sorted(metric.samples.items()):
                text = ",".join(f'{k}="{v}"' for k, v in labels)
                lines.append(
                    f"{metric.name}{{{text}}} {value!r}" if text else f"{metric.name} {value!r}"
                )
        return ("\n".join(lines) + "\n").encode()


REGISTRY = Registry()
