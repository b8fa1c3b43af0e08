#!/bin/sh
# A crawler worker of the compose deployment: `scrapy crawl topic` with its arguments taken
# from the environment (docker-compose.yml sets them):
#   SEEDS (required), TOPIC, RUN_ID, MAX_PAGES (the crawl's page budget, shared by every
#   worker; empty: none), DB_BATCH (pages per database write: 1, so a killed worker loses no
#   page it accepted), CRAWL_ARGS (more `-a`/`-s` options, e.g. "-s CLOSESPIDER_TIMEOUT=600").
# A proxy is taken from http_proxy / https_proxy as usual.
set -eu
: "${SEEDS:?set SEEDS (comma-separated seed URLs)}"
set -- scrapy crawl topic -a "seeds=$SEEDS" -a "topic=${TOPIC:-topics/dangjian.toml}" \
  -a "run_id=${RUN_ID:-1}" -s "TOPICRAWL_SPILL_DIR=/work/topicrawl-spill" \
  -s "TOPICRAWL_DB_BATCH=${DB_BATCH:-1}"
if [ -n "${MAX_PAGES:-}" ]; then
  set -- "$@" -a "max_pages=$MAX_PAGES"
fi
# shellcheck disable=SC2086 # CRAWL_ARGS is a list of options
exec "$@" ${CRAWL_ARGS:-}
