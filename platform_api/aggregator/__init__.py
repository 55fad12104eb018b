"""The aggregation layer (kube-aggregator): APIService registrations and their status."""
