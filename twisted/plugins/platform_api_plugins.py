"""twistd plugins: ``twistd platform-apiserver``."""

from twisted.application.service import ServiceMaker

platform_apiserver = ServiceMaker(
    "platform-apiserver",
    "platform_api.apiserver.tap",
    "A Kubernetes-compatible cluster control plane API server (LMDB storage, TLS).",
    "platform-apiserver",
)

platform_controller_manager = ServiceMaker(
    "platform-controller-manager",
    "platform_api.controllermanager.tap",
    "The cluster's controllers in their own process, talking to the API server over HTTPS.",
    "platform-controller-manager",
)
