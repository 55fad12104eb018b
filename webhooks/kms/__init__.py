"""A sample KMS v2 plugin: ``python -m webhooks.kms --socket PATH --key-file PATH``.

What a real plugin does with an HSM or a cloud KMS, done with a local key: the API
server sends it a 32-byte seed to encrypt once per key ID, and encrypted seeds to
decrypt.  The key file holds base64 keys, one a line: the first encrypts (its key ID
``key-<first 16 hex of sha256(key)>`` is what Status reports), every one decrypts, so
putting a new key first and keeping the old ones is key rotation; the file is read
again on every call, as a plugin would notice a rotated key.
"""
