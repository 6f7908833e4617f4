"""Publishing: the build (API documents, bundles, provenance, permissions, schemas, marketplace, the website
through ``site``), the deploy check, scaffolding and import/export, and ``serve`` (build, serve, rebuild).
"""
