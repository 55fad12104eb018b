"""ResourceQuota: kube's quota admission plugin, its usage evaluators and scopes.

``plugin`` charges every matching quota before an object is written; ``controllers/
resourcequota.py`` recomputes what the quotas say from what is stored.
"""
