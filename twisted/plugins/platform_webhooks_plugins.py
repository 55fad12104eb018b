"""twistd plugins of the sample webhook services: ``twistd platform-token-webhook``."""

from twisted.application.service import ServiceMaker

platform_token_webhook = ServiceMaker(
    "platform-token-webhook",
    "webhooks.token_review",
    "Sample token-review webhook: answers TokenReview from a YAML users file.",
    "platform-token-webhook",
)
