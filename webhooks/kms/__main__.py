"""``python -m webhooks.kms --socket PATH --key-file PATH [--generate-key]``."""

from __future__ import annotations

import argparse
import base64
import os
import sys

from webhooks.grpcplugin import run_until_stopped
from webhooks.kms.plugin import serve


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m webhooks.kms", description=__doc__)
    parser.add_argument("--socket", required=True, help="unix socket path to listen on")
    parser.add_argument("--key-file", required=True, help="base64 AES-256 keys, one a line")
    parser.add_argument(
        "--generate-key", action="store_true", help="create the key file if it is missing"
    )
    args = parser.parse_args(argv)
    if args.generate_key and not os.path.exists(args.key_file):
        with open(os.open(args.key_file, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(base64.b64encode(os.urandom(32)).decode() + "\n")
    server = serve(args.socket, args.key_file)
    return run_until_stopped(
        server, f"KMS v2 plugin listening on unix://{os.path.abspath(args.socket)}"
    )


if __name__ == "__main__":
    sys.exit(main())
