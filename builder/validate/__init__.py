"""Checking skills: the rules (``checks``), active-content scanning, report formats, ``--changed-since`` and the
rules reference. Imports only ``core``.
"""
