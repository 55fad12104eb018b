"""twistd plugins: ``twistd platform-apiserver``."""

from twisted.application.service import ServiceMaker

platform_apiserver = ServiceMaker(
    "platform-apiserver",
    "platform_api.apiserver.tap",
    "A Kubernetes-compatible cluster control plane API server (LMDB storage, TLS).",
    "platform-apiserver",
)
