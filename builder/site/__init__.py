"""The website: pages from the templates (``pages``), Markdown bodies (``render``) and the theme's hooks.
Imports only ``core``; the build in ``publish`` calls it.
"""
