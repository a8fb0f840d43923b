# icemaint as a container, in three stages; only the first and the last are shipped.
#
#   docker build -t icemaint:0.1.0 .                       # the version of pyproject.toml
#   docker build --build-arg BASE=IMAGE -t icemaint:0.1.0 .   # another Debian 12 base
#
# BASE is any Debian 12 (bookworm) image: the official Python image by default, or one made
# from Debian's packages alone (tests/test_container.py builds it with debootstrap), where
# scripts/setup-system.sh installs Debian's python3. Python runs from a venv that is first on
# PATH either way, so `python`, `pip` and `icemaint` mean the venv's.
#
# Behind a proxy that re-signs HTTPS, give pip and the jar download the proxy's CA, PEM text
# in EXTRA_CA_CERTS: the build stage trusts it, and the shipped image, which copies only the
# venv, the jars and the wheel from there, never has it:
#   docker build --build-arg EXTRA_CA_CERTS="$(cat /usr/local/share/ca-certificates/*.crt)" ...
#
# Layers go from what changes least to what changes most: system packages, the Python
# dependencies (from pyproject.toml alone), the pinned jars, and only then the code, so a
# code change rebuilds small layers. tests/test_deploy.py checks this file's rules.
ARG BASE=python:3.11-slim-bookworm

# --- runtime: the system packages the image ships --------------------------------------------
FROM ${BASE} AS runtime
ENV LANG=C.UTF-8 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/icemaint/venv \
    PATH=/opt/icemaint/venv/bin:$PATH \
    ICEMAINT_JARS=/opt/icemaint/jars
# The JRE and the SQLite JDBC driver (and Python where the base has none), by the same
# scripts/setup-system.sh as `make setup`, so CI exercises the install path the image uses;
# and tini: PID 1 forwards SIGTERM to icemaint (which then finishes or cancels its jobs and
# releases its leases) and reaps the JVM's and the shell's exited children. apt's lists and
# the packages it downloaded (a base without the official images' apt settings keeps them:
# 136 MB), and the documentation but its copyright files, go in the same layer.
COPY scripts/setup-system.sh /tmp/setup-system.sh
RUN bash /tmp/setup-system.sh \
    && apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends tini >/dev/null \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/* /var/cache/debconf/*-old /var/log/apt /var/log/dpkg.log /tmp/setup-system.sh \
              /usr/share/man/* /usr/share/info/* \
    && find /usr/share/doc -type f ! -name copyright -delete

# --- build: the venv, the jars and the wheel; never shipped ------------------------------------
FROM runtime AS build
ARG EXTRA_CA_CERTS=
RUN if [ -n "$EXTRA_CA_CERTS" ]; then \
        printf '%s\n' "$EXTRA_CA_CERTS" > /usr/local/share/ca-certificates/build-extra.crt \
        && update-ca-certificates >/dev/null; \
    fi
ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt

# The dependencies only, no dev extras: `pip install .` would need the code, so the list is
# read from pyproject.toml, and this layer is rebuilt only when pyproject.toml changes.
COPY pyproject.toml /tmp/pyproject.toml
RUN python3 -m venv "$VIRTUAL_ENV" \
    && python -c "import tomllib; print('\n'.join(tomllib.load(open('/tmp/pyproject.toml', 'rb'))['project']['dependencies']))" > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt -q \
    && rm /tmp/requirements.txt /tmp/pyproject.toml

# Apache Iceberg's Spark runtime and AWS bundle (S3FileIO), and hadoop-aws with its AWS SDK
# bundle (s3a), from Maven Central, each checked against the SHA-256 pinned in
# maintenance/spark/jars.py: only a change of that file downloads them again. Not the Flink
# runtime: the daemon never writes through Flink. icemaint finds them in $ICEMAINT_JARS and
# adds them to every Spark session (the driver ships them to the executors).
COPY maintenance/__init__.py maintenance/errors.py /tmp/fetch/maintenance/
COPY maintenance/spark/__init__.py maintenance/spark/jars.py /tmp/fetch/maintenance/spark/
RUN cd /tmp/fetch && python -m maintenance.spark.jars fetch --for spark,s3a && rm -rf /tmp/fetch

# The code, installed as a regular (non-editable) package from its wheel into a prefix of
# its own, which the image lays over the venv: a code change rebuilds that small layer
# only. Building the wheel downloads setuptools, so it is done here, where the CA is.
# migrations/ and policies/ are packaged inside it (pyproject.toml).
COPY README.md pyproject.toml /tmp/src/
COPY maintenance /tmp/src/maintenance
COPY policies /tmp/src/policies
COPY migrations /tmp/src/migrations
RUN pip wheel -q --no-deps --wheel-dir /tmp/wheels /tmp/src \
    && pip install --no-deps --no-index -q --prefix /opt/icemaint/code /tmp/wheels/*.whl \
    && rm -rf /tmp/src /tmp/wheels
# What the daemon never runs stays here (measured: deploy/README.md, "The image"): pip and
# setuptools (nothing installs packages at run time); Spark's MLlib with GraphX and their
# numeric libraries (35 MB), and Spark's Mesos cluster manager (8 MB): icemaint runs SQL,
# on local, standalone, YARN or Kubernetes masters; pyarrow's Flight RPC library, C++
# headers and tests (46 MB): pyiceberg reads through pyarrow's dataset, Parquet and file
# system modules, which the import at the end checks are whole.
RUN pip uninstall -q -y pip setuptools \
    && cd "$VIRTUAL_ENV"/lib/python3*/site-packages \
    && rm -f pyspark/jars/spark-mllib* pyspark/jars/spark-graphx_* pyspark/jars/breeze* pyspark/jars/spire* \
             pyspark/jars/algebra_* pyspark/jars/cats-kernel_* pyspark/jars/arpack* pyspark/jars/blas-* \
             pyspark/jars/lapack-* pyspark/jars/JTransforms-* pyspark/jars/JLargeArrays-* \
             pyspark/jars/mesos-* pyspark/jars/spark-mesos_* \
             pyarrow/libarrow_flight.so* pyarrow/libarrow_python_flight.so* pyarrow/_flight.* \
    && rm -rf pyarrow/include pyarrow/tests pyarrow/src \
    && python -c "import pyarrow.dataset, pyarrow.parquet, pyarrow.fs, pyiceberg.io.pyarrow, pyspark.sql"

# --- the image: runtime + the venv, the jars and the code ------------------------------------
FROM runtime
COPY --from=build /opt/icemaint/venv /opt/icemaint/venv
COPY --from=build /opt/icemaint/jars /opt/icemaint/jars
COPY --from=build /opt/icemaint/code /opt/icemaint/venv
RUN useradd --system --uid 10001 --user-group --create-home --home-dir /var/lib/icemaint icemaint

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
