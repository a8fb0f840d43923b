# icemaint as a container. The image runs the same system step as `make setup`
# (scripts/setup-system.sh), so CI exercises the install path the image uses.
FROM python:3.11-slim-bookworm

WORKDIR /opt/icemaint
COPY scripts/setup-system.sh scripts/setup-system.sh
RUN bash scripts/setup-system.sh && rm -rf /var/lib/apt/lists/*

COPY pyproject.toml README.md ./
COPY maintenance maintenance
COPY policies policies
COPY migrations migrations
# Installed in place: migrations/ and policies/ are read from beside the package.
RUN pip install --no-cache-dir -e . \
    && useradd --system --create-home --home-dir /var/lib/icemaint icemaint

USER icemaint
# Config by a mounted file (ICEMAINT_CONFIG) or, for the embedded default, state under ICEMAINT_HOME.
ENV ICEMAINT_HOME=/var/lib/icemaint \
    ICEMAINT_CONFIG=
VOLUME ["/var/lib/icemaint"]
# Prometheus metrics and the container probe (daemon.metrics_port).
EXPOSE 9464
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:9464/healthz', timeout=4)"
ENTRYPOINT ["icemaint"]
CMD ["daemon"]
