"""kube-apiserver's auditing: a policy picks each request's level, events go to backends.

``policy`` (the Policy file and its rules), ``event`` (the Event document), ``hook`` (the
request-flow side: one record per request), ``logbackend`` and ``webhookbackend`` (sinks).
"""
