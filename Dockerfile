# The topicrawl image: crawler workers, post-processor and console (see README, "Deploy").
# Python 3.11 from Debian bookworm; the pinned dependencies (requirements.lock) are installed
# before the code is copied, and the code is the last layer, so a code-only change rebuilds one
# layer; runs as the non-root user topicrawl.

# Stage 1: the compiled dedup feature pass (dedup/_features.pyx, Cython), built against the
# same Debian Python as the image's; only the .so goes on (no compiler in the image). It
# depends on setup.py and the .pyx alone, so a code-only change keeps it cached.
FROM debian:bookworm-slim AS features
ARG DEBIAN_FRONTEND=noninteractive
ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
COPY deploy/ca-certificates/ /usr/local/share/ca-certificates/
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv python3-dev gcc libc6-dev \
        ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && update-ca-certificates \
    && python3 -m venv /opt/build \
    && /opt/build/bin/pip install "Cython>=3.0,<4" "setuptools>=77" wheel
WORKDIR /src
COPY setup.py ./
COPY dedup/_features.pyx dedup/
RUN /opt/build/bin/python setup.py build_ext --inplace \
    && ls dedup/_features.*.so

# Stage 2: the image
FROM debian:bookworm-slim

ARG DEBIAN_FRONTEND=noninteractive
ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/venv/bin:$PATH \
    PYTHONPATH=/app \
    TOPICRAWL_DATA=/data

# A network whose HTTPS passes a re-signing proxy: its CA (deploy/ca-certificates/*.crt) is
# trusted by the system and by pip (PIP_CERT). Empty on a normal network.
COPY deploy/ca-certificates/ /usr/local/share/ca-certificates/
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && update-ca-certificates \
    && useradd --system --create-home --uid 10001 --shell /usr/sbin/nologin topicrawl \
    && mkdir -p /work && chown topicrawl /work

COPY requirements.lock /tmp/requirements.lock
# the `topicrawl` command runs the code in /app (PYTHONPATH), so the code needs no install step
RUN python3 -m venv /opt/venv \
    && pip install --no-deps -r /tmp/requirements.lock \
    && pip check \
    && printf '#!/opt/venv/bin/python\nimport sys\nfrom topicrawl.cli import main\nsys.exit(main())\n' \
        >/opt/venv/bin/topicrawl \
    && chmod 755 /opt/venv/bin/topicrawl

# the shared data (HowNet, Cilin, ...) is mounted at /data; /work (a volume) takes spilled pages
WORKDIR /app
USER topicrawl
CMD ["scrapy", "list"]
# the compiled dedup feature pass from stage 1 (.dockerignore keeps a host-built one out)
COPY --from=features /src/dedup/_features.*.so /app/dedup/
# the code, last (.dockerignore keeps tests, benchmarks, docs and local files out)
COPY . .
# importing the dedup methods fails without the compiled module: check it loads here
RUN python -c "import dedup.compiled"
