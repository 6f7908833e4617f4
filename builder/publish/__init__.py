"""The build pipeline (``build``) and what it writes: API documents, bundles, provenance, version history,
permissions, schemas, search shards and the skills manifest, the website through ``site``, signed by
``signing`` when asked, put in place by one output transaction.
"""
