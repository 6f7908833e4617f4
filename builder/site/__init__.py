"""The website, written by ``pages.write_site``: the pages' ``plan``, their ``shells`` (rendered once by mkdocs,
``mkdocs_run``), ``skill_pages``, ``listings`` (home, categories, tags, search), the ``page_templates``, Markdown
bodies (``render``, ``bodies``), ``sitemaps`` and the theme's hooks. Imports only ``core``; the build in ``publish``
calls it.
"""
