# Greenloop worker image. Build from the repository root:
#   docker build -f deploy/worker.Dockerfile -t greenloop-worker .
FROM python:3.11-slim-bookworm
RUN apt-get update && apt-get install -y --no-install-recommends git bubblewrap docker.io \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/greenloop
COPY pyproject.toml README.md ./
COPY parsers parsers
COPY runner runner
COPY sandbox sandbox
COPY analysis analysis
COPY domain domain
COPY llm llm
COPY workspace workspace
COPY server server
COPY workflows workflows
COPY activities activities
COPY cli cli
COPY worker.py ./
RUN pip install --no-cache-dir .
ENV GREENLOOP_HOME=/var/lib/greenloop
# Give each worker a stable host id (docker run -e GREENLOOP_HOST=build-3, or --hostname), so a
# restarted container finds its runs on its volume instead of having them rebuilt elsewhere.
VOLUME /var/lib/greenloop
STOPSIGNAL SIGTERM
ENTRYPOINT ["greenloop", "worker"]
