"""twistd plugins of the sample webhook services (token review, authorization, CRD
conversion, admission)."""

from twisted.application.service import ServiceMaker

platform_token_webhook = ServiceMaker(
    "platform-token-webhook",
    "webhooks.token_review",
    "Sample token-review webhook: answers TokenReview from a YAML users file.",
    "platform-token-webhook",
)

platform_authz_webhook = ServiceMaker(
    "platform-authz-webhook",
    "webhooks.authorization",
    "Sample authorization webhook: answers SubjectAccessReview from a YAML policy file.",
    "platform-authz-webhook",
)

platform_conversion_webhook = ServiceMaker(
    "platform-conversion-webhook",
    "webhooks.conversion",
    "Sample CRD conversion webhook: renames fields between versions from a YAML file.",
    "platform-conversion-webhook",
)

platform_admission_webhook = ServiceMaker(
    "platform-admission-webhook",
    "webhooks.admission",
    "Sample admission webhook: a validating rule and mutating defaults from a YAML file.",
    "platform-admission-webhook",
)
