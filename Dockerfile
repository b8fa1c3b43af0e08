# The topicrawl image: crawler workers, post-processor and console (see README, "Deploy").
# Python 3.11 from Debian bookworm; pinned dependencies (requirements.lock) installed before
# the code is copied, so a code-only change rebuilds in seconds; runs as a non-root user.
FROM debian:bookworm-slim

ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
    && rm -rf /var/lib/apt/lists/*

# A network whose HTTPS passes a re-signing proxy: its CA (deploy/ca-certificates/*.crt) is
# trusted by the system and by pip. Empty on a normal network.
COPY deploy/ca-certificates/ /usr/local/share/ca-certificates/
RUN update-ca-certificates
ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/venv/bin:$PATH

COPY requirements.lock /tmp/requirements.lock
RUN python3 -m venv /opt/venv \
    && pip install --no-deps -r /tmp/requirements.lock \
    && pip check

WORKDIR /app
# the code, in one layer (.dockerignore keeps tests, benchmarks, docs and local files out)
COPY . .
# the project itself, editable (its code stays in /app), with the locked build tools
RUN pip install --no-deps --no-build-isolation -e . \
    && useradd --system --create-home --uid 10001 --shell /usr/sbin/nologin topicrawl \
    && mkdir -p /work && chown topicrawl /work

USER topicrawl
# the shared data (HowNet, Cilin, ...) is mounted here; /work (a volume) takes spilled pages
ENV TOPICRAWL_DATA=/data
CMD ["scrapy", "list"]
