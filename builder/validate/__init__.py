"""Checking skills: the rules for one skill (``checks``: frontmatter fields and files; ``names``: the name, alone
and across the registry; ``invisible``: hidden characters; ``body``: the Markdown body), active-content scanning,
many skills checked at once (``run``), the report and its formats (``report``), ``--changed-since`` and the rules
reference. Imports only ``core``.
"""
