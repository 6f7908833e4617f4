"""The values every stage shares: a skill as files and parsed frontmatter, the registry's settings, findings,
the published URL scheme and search ranking, errors, and the small filesystem and process helpers.

Nothing here imports another stage, so a client that only reads a registry needs only this package.
"""
