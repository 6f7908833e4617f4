"""Signed registries (TUF, through python-tuf): the keys and root chain (``keys``), the hashed bins (``bins``),
the metadata a build signs (``metadata``) over each skill's ``digests.json`` (``digests``), and ``lean_tuf``,
which every module importing python-tuf imports first.

It sits on ``core`` alone, below both the build, which signs, and the client, which verifies.
"""
