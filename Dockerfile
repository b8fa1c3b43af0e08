FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md scrapy.cfg ./
COPY topicrawl topicrawl
COPY crawler crawler
COPY relevance relevance
COPY dedup dedup
COPY models models
COPY postprocess postprocess
COPY sitegen sitegen
COPY console console
COPY topics topics
RUN pip install --no-cache-dir -e .
ENV TOPICRAWL_DATA=/data
CMD ["scrapy", "list"]
