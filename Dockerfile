# The load generator's image: a Locust master or worker running partition-stress's locustfile.
# Locust's web UI with the Partitions tab, built as scripts/setup.sh builds it
FROM node:20-slim AS webui
WORKDIR /src/webui
COPY webui/package.json webui/package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error
COPY webui ./
RUN npm run build

FROM python:3.11-slim
WORKDIR /app
COPY requirements.lock ./
RUN pip install --no-cache-dir -r requirements.lock
COPY pyproject.toml README.md ./
COPY loadtest ./loadtest
COPY --from=webui /src/loadtest/live/webui ./loadtest/live/webui
RUN pip install --no-cache-dir --no-deps -e .
EXPOSE 8089 5557
ENTRYPOINT ["locust", "-f", "loadtest/locustfile.py"]
