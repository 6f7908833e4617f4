"""Benchmarks for skill-registry: our figures beside the alternatives', on the same generated corpus, in one run.

Run ``python -m bench`` from the repository root (``--quick`` for the small version CI runs).
"""
