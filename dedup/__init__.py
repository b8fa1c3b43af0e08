"""Near-duplicate detection: one detector interface, pluggable index storage, a cascade.

``base`` (Doc, Match, Detector, registry), ``storage`` (memory / SQLite / Redis backends),
``exact``, ``spotsigs``, ``titlesummary``, ``featurecode``, ``dwdcs`` (the methods),
``cascade`` (first match decides), ``pipeline`` (the Scrapy item pipeline), ``evaluate``
(``topicrawl dedup eval`` and the antecedent learner). See docs/dedup.md.
"""
