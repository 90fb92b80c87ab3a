# The load generator's image: a Locust master or worker running partition-stress's locustfile.
FROM python:3.11-slim
WORKDIR /app
COPY requirements.lock ./
RUN pip install --no-cache-dir -r requirements.lock
COPY pyproject.toml README.md ./
COPY loadtest ./loadtest
RUN pip install --no-cache-dir --no-deps -e .
EXPOSE 8089 5557
ENTRYPOINT ["locust", "-f", "loadtest/locustfile.py"]
