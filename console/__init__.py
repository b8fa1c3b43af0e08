"""The crawl console: ``topicrawl serve`` (web UI, JSON API and Prometheus metrics)."""
