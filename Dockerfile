# icemaint as a container. The image runs the same system step as `make setup`
# (scripts/setup-system.sh), so CI exercises the install path the image uses.
# Layers go from what changes least to what changes most: system packages, the Python
# dependencies (from pyproject.toml alone), the pinned jars, and only then the code, so a
# code change rebuilds one small layer. tests/test_deploy.py checks this file's rules.
#
#   docker build -t icemaint .
FROM python:3.11-slim-bookworm

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /opt/icemaint

# The JRE and the SQLite JDBC driver (scripts/setup-system.sh), and tini: PID 1 forwards
# SIGTERM to icemaint (which then finishes or cancels its jobs and releases its leases)
# and reaps the JVM's and the shell's exited children.
COPY scripts/setup-system.sh scripts/setup-system.sh
RUN bash scripts/setup-system.sh \
    && apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends tini >/dev/null \
    && rm -rf /var/lib/apt/lists/*

# The dependencies only: `pip install .` would need the code, so the list is read from
# pyproject.toml. This layer is rebuilt only when pyproject.toml changes.
COPY pyproject.toml /tmp/pyproject.toml
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('/tmp/pyproject.toml', 'rb'))['project']['dependencies']))" > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt /tmp/pyproject.toml

# Apache Iceberg's Spark runtime and AWS bundle (S3FileIO), and hadoop-aws with its AWS SDK
# bundle (s3a), from Maven Central, each checked against the SHA-256 pinned in
# maintenance/spark/jars.py: only a change of that file downloads them again. icemaint finds
# them in $ICEMAINT_JARS and adds them to every Spark session (the driver ships them to the
# executors), so a config needs no `spark.jars` for S3.
ENV ICEMAINT_JARS=/opt/icemaint/jars
COPY maintenance/__init__.py maintenance/errors.py /tmp/fetch/maintenance/
COPY maintenance/spark/__init__.py maintenance/spark/jars.py /tmp/fetch/maintenance/spark/
RUN cd /tmp/fetch && python -m maintenance.spark.jars fetch --for spark,s3a && rm -rf /tmp/fetch

# The code, installed as a regular (non-editable) package: migrations/ and policies/ are
# packaged inside it (pyproject.toml), so the source folder is removed afterwards.
COPY README.md pyproject.toml src/
COPY maintenance src/maintenance
COPY policies src/policies
COPY migrations src/migrations
RUN pip install --no-deps ./src \
    && rm -rf src \
    && useradd --system --uid 10001 --user-group --create-home --home-dir /var/lib/icemaint icemaint

# A numeric user, so Kubernetes' runAsNonRoot can check it.
USER 10001:10001
WORKDIR /var/lib/icemaint
# Config by a mounted file (ICEMAINT_CONFIG) or, for the embedded default, state under ICEMAINT_HOME.
ENV ICEMAINT_HOME=/var/lib/icemaint \
    ICEMAINT_CONFIG=
VOLUME ["/var/lib/icemaint"]
# Prometheus metrics, the probes and the status page (daemon.metrics_port; 9464 by default).
EXPOSE 9464
# Liveness, not readiness: /livez fails only when the process or its scheduler is stuck, so a
# state database or catalog outage does not mark the container unhealthy (/readyz does that).
# The port and address are read from the configuration, as the daemon reads them; with the
# endpoint turned off (metrics_port: 0) there is nothing to probe.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s \
    CMD ["python", "-c", "import urllib.request; from maintenance.config import load_config; d = load_config().daemon; host = '127.0.0.1' if d.metrics_host in ('', '0.0.0.0', '::') else d.metrics_host; d.metrics_port == 0 or urllib.request.urlopen(f'http://{host}:{d.metrics_port}/livez', timeout=4)"]
ENTRYPOINT ["/usr/bin/tini", "--", "icemaint"]
CMD ["daemon"]
