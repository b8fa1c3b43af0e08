"""Models the crawl learns as it goes (issue 10): the self-trained page model and the online
link model. One interface (:class:`relevance.learning.base.LearnedModel`): JSON-able state, no
pickle; nothing here depends on ``crawler/``."""
