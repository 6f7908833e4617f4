"""securesystemslib's signers without boto3: imported before python-tuf by every module that uses it.

``securesystemslib.signer`` imports every signer it ships, and its AWS KMS signer imports boto3 whenever boto3 is
installed (securesystemslib#1198, still open on 2026-12-02): 0.37 s of the 0.41 s python-tuf takes to import,
paid by every signed build and every verifying client in an environment with the ``s3`` extra (for
``skillreg upload``). The registry signs with ed25519 keys read from files (``CryptoSigner``), never through a
cloud KMS, so securesystemslib's signers are imported here with boto3 hidden; boto3 itself imports as usual
afterwards, and only securesystemslib's ``AWSSigner`` is left without it. When boto3 is already imported, nothing
is hidden.
"""

from __future__ import annotations

import sys


def _import_signers_without_boto3() -> None:
    if "securesystemslib.signer" in sys.modules or "boto3" in sys.modules:
        return
    sys.modules["boto3"] = None  # type: ignore[assignment]  # `import boto3` raises ImportError while it stands
    try:
        import securesystemslib.signer  # noqa: F401
    finally:
        del sys.modules["boto3"]


_import_signers_without_boto3()
