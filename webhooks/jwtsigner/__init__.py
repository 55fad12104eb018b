"""A sample external JWT signer: ``python -m webhooks.jwtsigner --socket PATH --key-file PATH``.

What a real signer does with an HSM or a cloud KMS, done with local keys: the API server
(``--service-account-signing-endpoint PATH``) sends it each service-account token's
claims to sign and asks it which keys verify them.  The key file holds PEM private keys
(RSA or ECDSA): the first signs, every one verifies, so putting a new key first and
keeping the old ones is key rotation.  Keys in ``--retired-key-file`` verify tokens
they signed before but are left out of the issuer's published keys.  Both files are
read again on every call, as a signer would notice a rotated key.
"""
