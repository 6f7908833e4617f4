"""Checking skills: the rules (``checks``: frontmatter fields, files and the registry as a whole; ``body``: the
Markdown body), active-content scanning, report formats, ``--changed-since`` and the rules reference.
Imports only ``core``.
"""
