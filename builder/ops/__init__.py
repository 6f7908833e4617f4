"""Commands that act on a registry but are not the build: ``serve`` (build, serve, rebuild), ``upload`` to
object storage, the deploy check, scaffolding (``new``), the prompts.chat codec (``import``/``export``), the
``<available_skills>`` prompt block, the Claude Code marketplace file, and CI's fetch of the previous signed
metadata (which speaks HTTP through the client).
"""
