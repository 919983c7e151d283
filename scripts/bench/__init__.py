"""`make bench` (`python -m scripts.bench`): latency and AWS calls per operation against raw-DynamoDB baselines,
agent turns against a plain loop, and handler cold imports against boto3's, each measured in the same run.

The modules: `stats` (measuring, percentiles, ratios, calls per operation), `report` (tables, JSON),
`cold_start` (handler imports in fresh interpreters), `operations` (the service operations and the KMS
scenarios), `keyring` (branch keys' cost per encrypt and decrypt against one KMS call per object), `turns`
(Temporal against a plain loop); `__main__` runs them on one `LocalStack`.
"""
