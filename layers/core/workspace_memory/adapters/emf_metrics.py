"""The metrics port (`kernel.metrics`) as CloudWatch Embedded Metric Format, through powertools.

Each count is one EMF line on stdout the moment the domain decides, with its own dimension set: powertools'
`Metrics` shares one dimension set among every metric of a flush, and a conflict's `code` is no dimension of
a recall. Lambda ships stdout to the function's log group, where CloudWatch extracts the metrics; locally the
line lands in the function log beside the log lines (scripts/localstack).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping

from aws_lambda_powertools.metrics.provider.cloudwatch_emf.cloudwatch import AmazonCloudWatchEMFProvider
from aws_lambda_powertools.metrics.provider.cloudwatch_emf.metric_properties import MetricUnit

from workspace_memory.kernel.metrics import Metric, Unit


class EmfMetrics:
    """A `kernel.metrics.Sink` writing one EMF document per count, dimensioned by `service` and the count's
    own dimensions."""

    def __init__(self, namespace: str, service: str) -> None:
        self._namespace = namespace
        self._service = service

    def document(self, metric: Metric, unit: Unit, value: float, dimensions: Mapping[str, str]) -> str:
        """The EMF line of one count (validated by powertools: names, units, at most 29 dimensions)."""
        emf = AmazonCloudWatchEMFProvider(namespace=self._namespace, service=self._service)
        emf.add_metric(name=metric.value, unit=MetricUnit(unit.value), value=value)
        for name, given in dimensions.items():
            emf.add_dimension(name=name, value=given)
        return json.dumps(emf.serialize_metric_set(), separators=(",", ":"))

    def emit(self, metric: Metric, unit: Unit, value: float, dimensions: Mapping[str, str]) -> None:
        sys.stdout.write(self.document(metric, unit, value, dimensions) + "\n")
        sys.stdout.flush()
