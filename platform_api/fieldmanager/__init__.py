"""Server-side apply and managedFields: per-field ownership, as structured-merge-diff.

``fieldpath`` is the path and set model with kube's FieldsV1 encoding, ``typed`` reads
list and map semantics from the OpenAPI schemas, ``walk`` holds the value walks (field
sets, comparison, merge, pruning) and ``manager`` the ownership rules of Update and
Apply.
"""
