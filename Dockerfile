# skillc serve in a container (docs/deploy.md, "Container image").
#
#   docker build -t skillc .                                  # without Chromium
#   docker build -t skillc:chromium --build-arg WITH_CHROMIUM=true .
#   docker run -p 8765:8765 -v /srv/skills:/skills:ro -e SKILLC_STATE_URL=postgresql://skillc@db/skillc \
#     -v /run/secrets/pgpass:/run/secrets/pgpass:ro -e PGPASSFILE=/run/secrets/pgpass \
#     skillc /skills --resource-url https://mcp.example.com/mcp --auth-issuer https://auth.example.com \
#     --auth-jwks https://auth.example.com/.well-known/jwks.json
#
# The arguments after the image name are the skill folders and any more `skillc serve` options;
# the server listens on 0.0.0.0:8765, so it needs auth (--auth-issuer ...) or --insecure-no-auth.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY skillc ./skillc
ARG WITH_CHROMIUM=false
# The `debug` extra (Playwright) only where the image carries a browser to drive.
RUN python -m venv /opt/skillc \
    && if [ "$WITH_CHROMIUM" = "true" ]; then extra="[debug]"; else extra=""; fi \
    && /opt/skillc/bin/pip install --no-cache-dir ".${extra}"

FROM ${PYTHON_IMAGE}
ARG WITH_CHROMIUM=false
# Chromium renders cards to images for the debug console and previews; the server runs without it.
# hadolint ignore=DL3008
RUN if [ "$WITH_CHROMIUM" = "true" ]; then \
      apt-get update \
      && apt-get install -y --no-install-recommends chromium \
      && rm -rf /var/lib/apt/lists/*; \
    fi \
    && useradd --system --uid 10001 --user-group --home-dir /var/lib/skillc --create-home skillc \
    && chmod 700 /var/lib/skillc
COPY --from=build /opt/skillc /opt/skillc
ENV PATH=/opt/skillc/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    SKILLC_STATE_DIR=/var/lib/skillc
# Never root: SO_REUSEPORT workers and the state belong to this user alone.
USER 10001:10001
WORKDIR /var/lib/skillc
VOLUME ["/var/lib/skillc"]
EXPOSE 8765
# Liveness only (/healthz never touches the store); point a load balancer's readiness at /readyz.
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8765/healthz', timeout=2)"]
# SIGTERM (docker stop): running calls finish within --graceful-timeout; give `docker stop -t 35`.
STOPSIGNAL SIGTERM
ENTRYPOINT ["skillc", "serve", "--host", "0.0.0.0", "--port", "8765", "--log-format", "json", "--graceful-timeout", "25"]
CMD ["/skills"]
