"""``python -m webhooks.jwtsigner --socket PATH --key-file PATH [--generate-key] ...``."""

from __future__ import annotations

import argparse
import os
import sys

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from webhooks.grpcplugin import run_until_stopped
from webhooks.jwtsigner.plugin import serve


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m webhooks.jwtsigner", description=__doc__)
    parser.add_argument("--socket", required=True, help="unix socket path (@name: abstract)")
    parser.add_argument("--key-file", required=True, help="PEM private keys; the first signs")
    parser.add_argument("--retired-key-file", help="PEM keys that only verify older tokens")
    parser.add_argument(
        "--generate-key", action="store_true", help="create an ECDSA P-256 key file if missing"
    )
    parser.add_argument(
        "--max-token-expiration",
        type=int,
        default=365 * 24 * 3600,
        help="the longest token lifetime the signer allows, in seconds (at least 600)",
    )
    parser.add_argument(
        "--refresh-hint", type=int, default=60, help="seconds before the server asks again"
    )
    args = parser.parse_args(argv)
    if args.generate_key and not os.path.exists(args.key_file):
        key = ec.generate_private_key(ec.SECP256R1())
        pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        with open(os.open(args.key_file, os.O_WRONLY | os.O_CREAT, 0o600), "wb") as f:
            f.write(pem)
    server = serve(
        args.socket,
        args.key_file,
        retired=args.retired_key_file,
        max_expiration=args.max_token_expiration,
        refresh_hint=args.refresh_hint,
    )
    return run_until_stopped(server, f"JWT signer listening on {args.socket}")


if __name__ == "__main__":
    sys.exit(main())
