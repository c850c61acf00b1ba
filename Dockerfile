# One container: the prebuilt site and the Reflex backend on one port, as a non-root user.
#   docker build --build-arg REFLEX_DEPLOY_URL=https://www.animalsweconfuse.com -t publisher .
#   docker run -p 8000:8000 -v publisher-data:/data publisher
# Everything it writes at run time goes to /data (the SQLite database of the embedded
# gateway, visitors' form state, the signing secrets it is not given, made once), so it also
# runs read-only:
#   docker run --read-only --tmpfs /tmp -p 8000:8000 -v publisher-data:/data publisher

# --- The runtime's dependencies: the venv the image runs, without pip and without what only
# the build needs (pyproject.toml's build extra), so there is nothing to uninstall afterwards. ---
FROM python:3.11-slim AS runtime-deps
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore
WORKDIR /app
# No pip (nor setuptools) in the venv: nothing at run time installs packages. The base image's
# pip installs into it (--python).
RUN python -m venv --without-pip /venv
# The dependencies alone first, so this layer is rebuilt only when pyproject.toml changes.
COPY pyproject.toml ./
# With the postgres extra: REFLEX_DB_URL=postgresql+psycopg://... works with nothing added.
RUN python -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; \
print('\n'.join(p['dependencies'] + p['optional-dependencies']['postgres']))" > /tmp/requirements.txt \
    && pip --python /venv/bin/python install -r /tmp/requirements.txt

# --- Build stage: the same venv with the build extra (Node from PyPI, the image tools, the
# feed), and the optimized frontend, built once. Only its output leaves this stage. ---
FROM runtime-deps AS build
ENV REFLEX_USE_NPM=1 \
    REFLEX_CHECK_LATEST_VERSION=false \
    REFLEX_TELEMETRY_ENABLED=false \
    PATH=/venv/bin:$PATH
RUN python -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; \
print('\n'.join(p['optional-dependencies']['build']))" > /tmp/build-requirements.txt \
    && pip --python /venv/bin/python install -r /tmp/build-requirements.txt
COPY README.md ./
COPY publisher ./publisher
RUN pip --python /venv/bin/python install --no-deps .
COPY rxconfig.py alembic.ini ./
COPY alembic ./alembic
COPY assets ./assets
COPY reflex.lock ./reflex.lock
# Canonical links, the sitemap and robots.txt are prerendered: the public URL is a build input.
ARG REFLEX_DEPLOY_URL=http://localhost:8000
RUN REFLEX_DEPLOY_URL="$REFLEX_DEPLOY_URL" REFLEX_ENV_MODE=prod reflex export --frontend-only --no-zip \
    && publisher-serve --prepare

# --- The app in the runtime's venv: the pages read the images' sizes from the build's manifest. ---
FROM runtime-deps AS app
COPY README.md ./
COPY publisher ./publisher
RUN pip --python /venv/bin/python install --no-deps .

# --- Final stage: the venv (with the app installed in it), the built site, a non-root user. ---
FROM python:3.11-slim
ARG REFLEX_DEPLOY_URL=http://localhost:8000
ENV PATH=/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    REFLEX_CHECK_LATEST_VERSION=false \
    REFLEX_TELEMETRY_ENABLED=false \
    REFLEX_DEPLOY_URL=$REFLEX_DEPLOY_URL \
    HOST=0.0.0.0 \
    PORT=8000 \
    REFLEX_DB_URL=sqlite:////data/publisher.db \
    REFLEX_STATES_WORKDIR=/data/states \
    ALEMBIC_CONFIG=/app/alembic.ini \
    PUBLISHER_SECRETS_DIR=/data \
    HOME=/data
RUN groupadd --gid 10001 site \
    && useradd --uid 10001 --gid site --no-create-home --home-dir /data --shell /usr/sbin/nologin site \
    && mkdir -p /data/states \
    && chown -R site:site /data \
    && chmod 700 /data /data/states
WORKDIR /app
# Owned by root and read-only to the server: it writes only under /data.
COPY --from=app /venv /venv
COPY --from=build /app/rxconfig.py /app/alembic.ini ./
COPY --from=build /app/alembic ./alembic
COPY --from=build /app/.web/build/client ./.web/build/client
COPY --from=build /app/.web/backend ./.web/backend
USER 10001:10001
VOLUME ["/data"]
EXPOSE 8000
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen(f'http://127.0.0.1:{os.environ[\"PORT\"]}/_health', timeout=2)"]
CMD ["publisher-serve"]
