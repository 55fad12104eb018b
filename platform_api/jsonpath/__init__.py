"""kube's JSONPath dialect (client-go ``util/jsonpath``) over plain JSON values.

Used for custom resources' printer columns and selectable fields, and templates
such as kubectl's ``-o jsonpath``::

    path = parse("{.status.conditions[?(@.type==\\"Ready\\")].status}", allow_missing_keys=True)
    path.find_results(obj)   # [["True"]]
    path.execute(obj)        # "True"
"""

from platform_api.jsonpath.gotext import NO_VALUE, marshal, sprint
from platform_api.jsonpath.parser import JSONPathError
from platform_api.jsonpath.template import JSONPath, parse

__all__ = ["NO_VALUE", "JSONPath", "JSONPathError", "marshal", "parse", "sprint"]
