"""The deployment files (deploy/, Dockerfile, the packaging) hold together, offline.

Nothing here can start a cluster, Docker or a registry, so each file is checked by what
can be checked without them: the Kubernetes manifests against the API schemas that
kubernetes-validate ships, the compose file against the Compose Specification's schema
(scripts/compose-schema.sh, run by `make test-tools`), the configs and policies they carry
with icemaint's own parsers, the references between them, and the Dockerfile's rules line
by line (its HEALTHCHECK is also run against a local server). Each check returns the
problems it finds, so the tests below can also show that a broken copy is caught.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

from maintenance import redact
from maintenance.config import Config, parse_config
from maintenance.errors import ConfigError
from maintenance.policy.loader import load_policies
from tests.support.paths import REPO

K8S = REPO / "deploy" / "kubernetes"
COMPOSE = REPO / "deploy" / "compose" / "compose.yaml"
COMPOSE_SCHEMA = REPO / ".venv" / "share" / "icemaint-schemas" / "compose_spec.json"
KUBERNETES_VERSION = "1.30.0"  # the oldest Kubernetes the manifests are meant for
# The image as the Dockerfile builds it and the manifests name it: by the package's version.
IMAGE = "icemaint:" + re.search(r'^version = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.M).group(1)  # type: ignore[union-attr]
# What the downward API gives the pods (fieldRef), as stand-ins.
FIELD_VALUES = {"metadata.name": "icemaint-5d8c7b9f4-x2x7q", "status.podIP": "10.42.0.17"}
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}")

Doc = dict[str, Any]


@pytest.fixture(autouse=True)
def _own_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Parsing a config remembers its secrets for redaction, process-wide: keep this
    module's stand-ins (a password like `icemaint`) from redacting other tests' output."""
    monkeypatch.setattr(redact, "_secrets", set())


# --- Kubernetes --------------------------------------------------------------------------


def load_manifests() -> list[Doc]:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    return [doc for name in kustomization["resources"] for doc in yaml.safe_load_all((K8S / name).read_text()) if doc]


def find(manifests: list[Doc], kind: str, name: str | None = None) -> list[Doc]:
    return [d for d in manifests if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]


def pod_spec(doc: Doc) -> Doc:
    return doc["spec"]["jobTemplate"]["spec"]["template"]["spec"] if doc["kind"] == "CronJob" else doc["spec"]["template"]["spec"]


def pod_labels(doc: Doc) -> dict[str, str]:
    template = doc["spec"]["jobTemplate"]["spec"]["template"] if doc["kind"] == "CronJob" else doc["spec"]["template"]
    return template["metadata"]["labels"]


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def schema_problems(manifests: list[Doc]) -> list[str]:
    """Every manifest against the Kubernetes API schema (strict: unknown fields are errors).
    kubernetes-validate has no schema for CRDs such as the Prometheus Operator's
    ServiceMonitor: that one is checked by its structure in `service_problems`."""
    return [problem for doc in manifests if not doc["apiVersion"].startswith("monitoring.coreos.com/") for problem in _schema_problems(json.dumps(doc))]


@functools.lru_cache(maxsize=64)
def _schema_problems(doc_json: str) -> tuple[str, ...]:
    """One manifest (as JSON, so the unchanged ones of the broken copies below are checked once)."""
    doc = json.loads(doc_json)
    try:
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.ValidationError as exc:
        return (f"{doc['kind']}/{doc['metadata']['name']}: schema: {exc.message} at {'.'.join(map(str, exc.path))}",)
    return ()


def namespace_problems(manifests: list[Doc]) -> list[str]:
    """One namespace: kustomization's, every object's, and the one Spark is told."""
    namespace = yaml.safe_load((K8S / "kustomization.yaml").read_text())["namespace"]
    listed = set(yaml.safe_load((K8S / "kustomization.yaml").read_text())["resources"])
    problems = [f"{path.name} is not in kustomization.yaml" for path in K8S.glob("*.yaml") if path.name != "kustomization.yaml" and path.name not in listed]
    for doc in manifests:
        actual = doc["metadata"]["name"] if doc["kind"] == "Namespace" else doc["metadata"].get("namespace")
        if actual != namespace:
            problems.append(f"{doc['kind']}/{doc['metadata']['name']}: namespace {actual!r}, not {namespace!r}")
    return problems


def reference_problems(manifests: list[Doc]) -> list[str]:
    """Everything the workloads name exists: ServiceAccount, Secrets (and their keys),
    ConfigMaps (and their keys, every one of which is mounted)."""
    problems = []
    for role_binding in find(manifests, "RoleBinding"):
        if not find(manifests, role_binding["roleRef"]["kind"], role_binding["roleRef"]["name"]):
            problems.append(f"RoleBinding/{role_binding['metadata']['name']}: no {role_binding['roleRef']['kind']} {role_binding['roleRef']['name']}")
        problems += [f"RoleBinding: no ServiceAccount {s['name']}" for s in role_binding["subjects"] if not find(manifests, "ServiceAccount", s["name"])]
    for workload in [*find(manifests, "Deployment"), *find(manifests, "CronJob")]:
        where, pod = f"{workload['kind']}/{workload['metadata']['name']}", pod_spec(workload)
        if not find(manifests, "ServiceAccount", pod.get("serviceAccountName", "default")):
            problems.append(f"{where}: no ServiceAccount {pod.get('serviceAccountName')}")
        for container in pod["containers"]:
            for source in container.get("envFrom", []):
                if "secretRef" in source and not find(manifests, "Secret", source["secretRef"]["name"]):
                    problems.append(f"{where}: no Secret {source['secretRef']['name']}")
            for item in container.get("env", []):
                ref = item.get("valueFrom", {}).get("secretKeyRef")
                if ref and ref["key"] not in secret_data(manifests, ref["name"]):
                    problems.append(f"{where}: no Secret {ref['name']} with key {ref['key']}")
        for volume in pod.get("volumes", []):
            if "configMap" not in volume:
                continue
            found = find(manifests, "ConfigMap", volume["configMap"]["name"])
            if not found:
                problems.append(f"{where}: no ConfigMap {volume['configMap']['name']}")
                continue
            data, keys = found[0]["data"], {item["key"] for item in volume["configMap"].get("items", [])}
            problems += [f"{where}: ConfigMap {volume['configMap']['name']} has no key {key}" for key in sorted(keys - set(data))]
            if "items" in volume["configMap"]:
                problems += [f"{where}: ConfigMap key {key} is not mounted (no `items` entry)" for key in sorted(set(data) - keys)]
    return problems


def secret_data(manifests: list[Doc], name: str) -> dict[str, str]:
    found = find(manifests, "Secret", name)
    return dict(found[0].get("stringData", {})) if found else {}


def probe_problems(deployment: Doc) -> list[str]:
    """Liveness on /livez and readiness on /readyz, both on the port named http."""
    container = pod_spec(deployment)["containers"][0]
    problems = []
    for probe, path in (("livenessProbe", "/livez"), ("readinessProbe", "/readyz")):
        get = container.get(probe, {}).get("httpGet", {})
        if get.get("path") != path or get.get("port") != "http":
            problems.append(f"Deployment: {probe} must GET {path} on port http, not {get or 'nothing'}")
    if "http" not in {p.get("name") for p in container.get("ports", [])}:
        problems.append("Deployment: no container port named http")
    return problems


def service_problems(manifests: list[Doc], spark_conf: dict[str, str]) -> list[str]:
    """The http Service and the ServiceMonitor reach the daemon's port http; the headless
    Service selects the daemon (only) and exposes the ports the Spark conf fixes."""
    deployment, namespace = find(manifests, "Deployment")[0], find(manifests, "Namespace")[0]["metadata"]["name"]
    labels, cron_labels = pod_labels(deployment), [pod_labels(c) for c in find(manifests, "CronJob")]
    services = find(manifests, "Service")
    headless = [s for s in services if s["spec"].get("clusterIP") == "None"]
    http = [s for s in services if "http" in {p["name"] for p in s["spec"]["ports"]}]
    problems = []
    if len(headless) != 1 or len(http) != 1:
        return [f"want one headless and one http Service, found {len(headless)} and {len(http)}"]
    for service in (*headless, *http):
        if not selects(service["spec"]["selector"], labels) or any(selects(service["spec"]["selector"], c) for c in cron_labels):
            problems.append(f"Service/{service['metadata']['name']}: its selector must match the daemon's pod labels only")
    ports = {(p["port"], p.get("targetPort")) for p in headless[0]["spec"]["ports"]}
    wanted = {int(spark_conf.get(key, "0")) for key in ("spark.driver.port", "spark.blockManager.port")}
    if ports != {(port, port) for port in wanted}:
        problems.append(f"Service/{headless[0]['metadata']['name']}: ports {sorted(ports)} are not the Spark conf's {sorted(wanted)}")
    if not headless[0]["spec"].get("publishNotReadyAddresses"):
        problems.append("the headless Service must list the daemon while /readyz fails (publishNotReadyAddresses)")
    if spark_conf.get("spark.driver.host") != f"{headless[0]['metadata']['name']}.{namespace}.svc":
        problems.append(f"spark.driver.host {spark_conf.get('spark.driver.host')} is not the headless Service's name")
    if http[0]["spec"]["ports"][0]["targetPort"] != "http":
        problems.append("Service/http must target the container port named http")
    monitors = find(manifests, "ServiceMonitor")
    if len(monitors) != 1:
        return [*problems, "want one ServiceMonitor"]
    monitor = monitors[0]
    endpoint = (monitor["spec"].get("endpoints") or [{}])[0]
    if monitor["apiVersion"] != "monitoring.coreos.com/v1" or not selects(monitor["spec"]["selector"].get("matchLabels", {}), http[0]["metadata"]["labels"]):
        problems.append("ServiceMonitor: must be monitoring.coreos.com/v1 and select the http Service's labels")
    if endpoint.get("port") != "http" or endpoint.get("path") != "/metrics":
        problems.append(f"ServiceMonitor: must scrape /metrics on port http, not {endpoint}")
    return problems


def container_env(pod: Doc, manifests: list[Doc]) -> dict[str, str]:
    """The container's environment as Kubernetes would set it (downward API: stand-ins)."""
    container, env = pod["containers"][0], {}
    for source in container.get("envFrom", []):
        if "secretRef" in source:
            env.update(secret_data(manifests, source["secretRef"]["name"]))
    for item in container.get("env", []):
        source = item.get("valueFrom", {})
        if "value" in item:
            env[item["name"]] = item["value"]
        elif "fieldRef" in source:
            env[item["name"]] = FIELD_VALUES[source["fieldRef"]["fieldPath"]]
        elif "secretKeyRef" in source and source["secretKeyRef"]["key"] in secret_data(manifests, source["secretKeyRef"]["name"]):
            env[item["name"]] = secret_data(manifests, source["secretKeyRef"]["name"])[source["secretKeyRef"]["key"]]
    return env


def mounted_files(pod: Doc, manifests: list[Doc]) -> dict[str, str]:
    """Absolute path -> content of every ConfigMap key the container sees."""
    volumes = {v["name"]: v["configMap"] for v in pod.get("volumes", []) if "configMap" in v}
    files = {}
    for mount in pod["containers"][0].get("volumeMounts", []):
        if mount["name"] in volumes and find(manifests, "ConfigMap", volumes[mount["name"]]["name"]):
            data = find(manifests, "ConfigMap", volumes[mount["name"]]["name"])[0]["data"]
            items = volumes[mount["name"]].get("items") or [{"key": k, "path": k} for k in data]
            files.update({f"{mount['mountPath']}/{item['path']}": data[item["key"]] for item in items if item["key"] in data})
    return files


def strings(value: Any) -> Iterator[str]:
    """Every string in a parsed YAML document (where icemaint substitutes `${VAR}`s)."""
    if isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)
    elif isinstance(value, str):
        yield value


@contextmanager
def environment(values: dict[str, str], unset: set[str]) -> Iterator[None]:
    saved = dict(os.environ)
    try:
        for name in unset:
            os.environ.pop(name, None)
        os.environ.update(values)
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def parse_mounted(text: str, env: dict[str, str], source: str, base_dir: Path) -> tuple[Config | None, list[str]]:
    """A mounted icemaint.yaml parsed with icemaint's parser in the container's environment;
    a `${VAR}` without a default that the container does not set is a problem by itself."""
    raw = yaml.safe_load(text) or {}
    refs = [m for value in strings(raw) for m in _ENV_REF.finditer(value)]
    names = {m.group(1) for m in refs}
    problems = [f"{source}: ${{{m.group(1)}}} is not in the container's environment" for m in refs if not m.group(2) and m.group(1) not in env]
    try:
        with environment({k: v for k, v in env.items() if k in names}, names):
            return parse_config(raw, source=source, base_dir=base_dir), problems
    except ConfigError as exc:
        return None, [*problems, str(exc)]


def workload_problems(manifests: list[Doc], tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    """Each workload's config and policies parse as mounted, with what its container sets;
    returns the problems and the daemon's Spark conf."""
    problems, daemon_conf = [], {}
    for workload in [*find(manifests, "Deployment"), *find(manifests, "CronJob")]:
        where, pod = f"{workload['kind']}/{workload['metadata']['name']}", pod_spec(workload)
        env, files = container_env(pod, manifests), mounted_files(pod, manifests)
        path = env.get("ICEMAINT_CONFIG", "")
        if path not in files:
            problems.append(f"{where}: ICEMAINT_CONFIG={path!r} is not a mounted file")
            continue
        config, found = parse_mounted(files[path], env, f"{where}:{path}", Path(path).parent)
        problems += found
        if config is None:
            continue
        conf = dict(config.spark.conf)
        ports = {p["containerPort"] for p in pod["containers"][0].get("ports", [])}
        expect = {
            "spark.kubernetes.namespace": find(manifests, "Namespace")[0]["metadata"]["name"],
            "spark.kubernetes.authenticate.driver.serviceAccountName": pod.get("serviceAccountName"),
            "spark.kubernetes.driver.pod.name": FIELD_VALUES["metadata.name"],
            "spark.submit.deployMode": "client",
        }
        problems += [f"{where}: {key} is {conf.get(key)!r}, not {value!r}" for key, value in expect.items() if conf.get(key) != value]
        if config.spark.master != "k8s://https://kubernetes.default.svc" or not conf.get("spark.kubernetes.container.image"):
            problems.append(f"{where}: Spark must run on Kubernetes (spark.master, spark.kubernetes.container.image)")
        problems += [f"{where}: {key} {conf.get(key)} is not a container port" for key in ("spark.driver.port", "spark.blockManager.port") if int(conf.get(key, "0")) not in ports]
        if pod.get("terminationGracePeriodSeconds", 30) <= config.daemon.shutdown_grace_s:
            problems.append(f"{where}: terminationGracePeriodSeconds must exceed daemon.shutdown_grace")
        policies = {name: text for name, text in files.items() if Path(name).parent == config.policies_dir}
        folder = tmp_path / workload["kind"] / "policies"
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in policies.items():
            (folder / Path(name).name).write_text(text)
        try:
            problems += [] if load_policies(folder) else [f"{where}: no policy is mounted in {config.policies_dir}"]
        except ConfigError as exc:
            problems.append(f"{where}: {exc}")
        if workload["kind"] == "Deployment":
            daemon_conf = conf
            http = [p["containerPort"] for p in pod["containers"][0]["ports"] if p.get("name") == "http"]
            if http != [config.daemon.metrics_port]:
                problems.append(f"{where}: the port named http {http} is not daemon.metrics_port {config.daemon.metrics_port}")
        else:
            if conf.get("spark.driver.host") != FIELD_VALUES["status.podIP"]:
                problems.append(f"{where}: executors must reach the Job's own pod (spark.driver.host from status.podIP)")
            if workload["spec"].get("concurrencyPolicy") != "Forbid" or pod["containers"][0].get("args") != ["run", "--json"]:
                problems.append(f"{where}: must run `icemaint run --json` with concurrencyPolicy Forbid")
    return problems, daemon_conf


def image_problems(manifests: list[Doc]) -> list[str]:
    """Every workload runs the image as built, by its version tag: `latest` (or no tag)
    names whatever was pushed or loaded last, and a node that has one keeps it
    (imagePullPolicy IfNotPresent), so two nodes could run two versions under one name."""
    problems = []
    for workload in [*find(manifests, "Deployment"), *find(manifests, "CronJob")]:
        for container in pod_spec(workload)["containers"]:
            if container["image"] != IMAGE:
                problems.append(f"{workload['kind']}/{workload['metadata']['name']}: image {container['image']}, not {IMAGE} (the version tag)")
    return problems


def kubernetes_problems(manifests: list[Doc], tmp_path: Path) -> list[str]:
    problems, daemon_conf = workload_problems(manifests, tmp_path)
    deployment = find(manifests, "Deployment")
    probes = probe_problems(deployment[0]) if len(deployment) == 1 else ["want one Deployment"]
    return [*schema_problems(manifests), *namespace_problems(manifests), *reference_problems(manifests), *probes, *problems,
            *service_problems(manifests, daemon_conf), *image_problems(manifests)]


def test_the_kubernetes_manifests_validate_and_hold_together(tmp_path: Path) -> None:
    manifests = load_manifests()
    assert {d["kind"] for d in manifests} >= {"Deployment", "Service", "ConfigMap", "Secret", "CronJob", "ServiceAccount", "Role", "RoleBinding", "ServiceMonitor"}
    assert kubernetes_problems(manifests, tmp_path) == []


def _container(kind: str) -> Callable[[list[Doc]], Doc]:
    return lambda m: pod_spec(find(m, kind)[0])["containers"][0]


def _set_in_config(old: str, new: str) -> Callable[[list[Doc]], None]:
    def mutate(m: list[Doc]) -> None:
        data = find(m, "ConfigMap")[0]["data"]
        key = next(k for k, v in data.items() if old in v)
        data[key] = data[key].replace(old, new)

    return mutate


_deployment, _cronjob = _container("Deployment"), _container("CronJob")
MUTATIONS: dict[str, tuple[Callable[[list[Doc]], Any], str]] = {
    "schema": (lambda m: find(m, "Deployment")[0]["spec"].update(replicas="one"), "schema"),
    "unknown field": (lambda m: _deployment(m).update(livenesProbe={}), "schema"),
    "no readiness probe": (lambda m: _deployment(m).pop("readinessProbe"), "readinessProbe must GET /readyz"),
    "liveness on /healthz": (lambda m: _deployment(m)["livenessProbe"]["httpGet"].update(path="/healthz"), "livenessProbe must GET /livez"),
    "missing Secret": (lambda m: _cronjob(m)["envFrom"][0]["secretRef"].update(name="nope"), "no Secret nope"),
    "missing ConfigMap key": (lambda m: pod_spec(find(m, "Deployment")[0])["volumes"][0]["configMap"]["items"][1].update(key="x.yaml"), "has no key x.yaml"),
    "env var not set": (lambda m: _deployment(m).update(env=[e for e in _deployment(m)["env"] if e["name"] != "POD_NAME"]), "${POD_NAME} is not in"),
    "driver port moved": (_set_in_config('spark.driver.port: "7078"', 'spark.driver.port: "7080"'), "not the Spark conf's"),
    "other namespace for Spark": (_set_in_config("spark.kubernetes.namespace: icemaint", "spark.kubernetes.namespace: spark"), "spark.kubernetes.namespace"),
    "broken policy": (_set_in_config("every: 30m", "every: soon"), "jobs.merge.every"),
    "headless selects nothing": (lambda m: find(m, "Service", "icemaint-driver")[0]["spec"]["selector"].update({"app.kubernetes.io/component": "x"}), "daemon's pod labels"),
    "ServiceMonitor port": (lambda m: find(m, "ServiceMonitor")[0]["spec"]["endpoints"][0].update(port="metrics"), "ServiceMonitor: must scrape"),
    "cron overlaps": (lambda m: find(m, "CronJob")[0]["spec"].update(concurrencyPolicy="Allow"), "concurrencyPolicy Forbid"),
    "image latest": (lambda m: _deployment(m).update(image="icemaint:latest"), "not " + IMAGE),
    "cron image untagged": (lambda m: _cronjob(m).update(image="icemaint"), "CronJob/icemaint-run: image icemaint,"),
}


@pytest.mark.parametrize("name", MUTATIONS)
def test_a_broken_copy_of_the_manifests_is_caught(name: str, tmp_path: Path) -> None:
    manifests = copy.deepcopy(load_manifests())
    mutate, expected = MUTATIONS[name]
    mutate(manifests)
    problems = kubernetes_problems(manifests, tmp_path)
    assert any(expected in p for p in problems), problems


# --- Compose -----------------------------------------------------------------------------


def compose_interpolated(text: str) -> Any:
    """The compose file as Compose reads it with no .env: each `${VAR:-default}` its default."""
    return yaml.safe_load(re.sub(r"\$\{[A-Za-z_][A-Za-z0-9_]*:-([^}]*)\}", r"\1", text))


def compose_problems(compose: Doc) -> list[str]:
    if not COMPOSE_SCHEMA.is_file():
        pytest.fail(f"{COMPOSE_SCHEMA} is missing: run `bash scripts/compose-schema.sh` (make test-tools does)")
    schema = json.loads(COMPOSE_SCHEMA.read_text())  # declares draft 2019-09, by a URL jsonschema does not know
    problems = [f"compose schema: {e.message} at {'.'.join(map(str, e.path))}" for e in jsonschema.Draft201909Validator(schema).iter_errors(compose)]
    if problems:
        return problems
    services = compose["services"]
    daemon = next((s for s in services.values() if s.get("image", "").startswith("icemaint")), None)
    database = next((name for name, s in services.items() if str(s.get("image", "")).startswith("postgres")), None)
    if daemon is None or database is None:
        return ["compose: want an icemaint service and a postgres service"]
    if daemon["image"] != IMAGE:
        problems.append(f"compose: the icemaint service's image must be {IMAGE} (the version tag), not {daemon['image']}")
    if "pg_isready" not in " ".join(services[database].get("healthcheck", {}).get("test", [])):
        problems.append("compose: PostgreSQL needs a pg_isready healthcheck")
    if not any(str(v).split(":")[0] in compose.get("volumes", {}) for v in services[database].get("volumes", [])):
        problems.append("compose: PostgreSQL's data must be on a named volume")
    if daemon.get("depends_on", {}).get(database, {}).get("condition") != "service_healthy":
        problems.append("compose: icemaint must wait for PostgreSQL to be healthy")
    config_path = daemon.get("environment", {}).get("ICEMAINT_CONFIG", "")
    mounts = [str(v).split(":") for v in daemon.get("volumes", [])]
    mount = next((m for m in mounts if len(m) == 3 and m[1] == config_path), None)
    if mount is None or mount[2] != "ro" or not (COMPOSE.parent / mount[0]).is_file():
        return [*problems, f"compose: ICEMAINT_CONFIG ({config_path}) must be a file beside compose.yaml, mounted read-only"]
    text = (COMPOSE.parent / mount[0]).read_text()
    config, found = parse_mounted(text, {k: str(v) for k, v in daemon["environment"].items()}, mount[0], Path(config_path).parent)
    problems += found
    if config is not None:
        if not config.state_url.startswith("postgresql://") or f"@{database}:" not in config.state_url:
            problems.append(f"compose: the state database must be the {database} service")
        if f"{config.daemon.metrics_port}:{config.daemon.metrics_port}" not in daemon.get("ports", []):
            problems.append("compose: daemon.metrics_port must be published")
    return problems


def test_the_compose_file_validates_and_its_config_parses() -> None:
    assert compose_problems(compose_interpolated(COMPOSE.read_text())) == []


@pytest.mark.parametrize(
    "mutate, expected",
    [
        (lambda c: c["services"]["icemaint"].update(dependson=["postgres"]), "compose schema"),
        (lambda c: c["services"]["icemaint"]["depends_on"]["postgres"].update(condition="service_started"), "healthy"),
        (lambda c: c["services"]["icemaint"].update(volumes=[v.removesuffix(":ro") for v in c["services"]["icemaint"]["volumes"]]), "read-only"),
        (lambda c: c["services"]["icemaint"]["environment"].pop("ICEMAINT_STATE_URL"), "${ICEMAINT_STATE_URL} is not in"),
        (lambda c: c["services"]["icemaint"].update(image="icemaint:latest"), "the version tag"),
    ],
    ids=["schema", "not waiting for health", "config writable", "state url unset", "image latest"],
)
def test_a_broken_copy_of_the_compose_file_is_caught(mutate: Callable[[Doc], Any], expected: str) -> None:
    compose = compose_interpolated(COMPOSE.read_text())
    mutate(compose)
    problems = compose_problems(compose)
    assert any(expected in p for p in problems), problems


# --- Dockerfile --------------------------------------------------------------------------


def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    instructions, pending = [], ""
    for line in text.splitlines():
        if line.lstrip().startswith("#") or not line.strip():
            continue
        pending += line.rstrip()
        if pending.endswith("\\"):
            pending = pending[:-1] + " "
            continue
        keyword, _, rest = pending.strip().partition(" ")
        instructions.append((keyword.upper(), rest.strip()))
        pending = ""
    return instructions


def dockerfile_stages(steps: list[tuple[str, str]]) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(name, what it is FROM, its instructions) of each stage, in order; a stage without
    `AS name` is named by its index."""
    stages: list[tuple[str, str, list[tuple[str, str]]]] = []
    for kind, args in steps:
        if kind == "FROM":
            words = args.split()
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else str(len(stages))
            stages.append((name, words[0], []))
        elif stages:
            stages[-1][2].append((kind, args))
    return stages


def shipped_stages(stages: list[tuple[str, str, list[tuple[str, str]]]]) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """The last stage and those it is built FROM: what the image is made of."""
    by_name = {name: stage for stage in stages for name in [stage[0]]}
    chain, stage = [], stages[-1] if stages else None
    while stage is not None:
        chain.append(stage)
        stage = by_name.get(stage[1])
    return chain


BUILD_ONLY = ("EXTRA_CA_CERTS", "/usr/local/share/ca-certificates", "update-ca-certificates", "PIP_CERT")


def dockerfile_problems(text: str) -> list[str]:
    steps = dockerfile_instructions(text)
    index = {i: (kind, args) for i, (kind, args) in enumerate(steps)}
    code = next((i for i, (kind, args) in index.items() if kind == "COPY" and re.search(r"(^|\s)maintenance(\s|/|$)", args)), None)
    deps = next((i for i, (kind, args) in index.items() if kind == "RUN" and re.search(r"pip install [^&]*-r ", args)), None)
    problems = []
    if code is None or deps is None or deps > code:
        problems.append("the dependencies must be installed (pip install -r) before the code is copied")
    installs = [args for kind, args in steps if kind == "RUN" and "pip install" in args]
    if any(re.search(r"pip install[^&]*\s(-e|--editable)\b", args) for args in installs):
        problems.append("the code must not be installed editable")
    if any(re.search(r"pip install[^&]*(\.|\w)\[[^\]]*dev", args) for args in installs):
        problems.append("no dev extras in the image: the dependencies of pyproject.toml's [project] only")
    if code is not None and not any(i > code and kind == "RUN" and "pip install --no-deps" in args for i, (kind, args) in index.items()):
        problems.append("the code must be installed (pip install --no-deps) after it is copied")
    cached = not any(kind == "ENV" and re.search(r"(^|\s)PIP_NO_CACHE_DIR=(1|true|yes|on)\b", a) for kind, a in steps)
    if cached and not all("--no-cache-dir" in args for args in installs):
        problems.append("pip must keep no cache in a layer (ENV PIP_NO_CACHE_DIR=1)")
    entrypoint = [json.loads(args) for kind, args in steps if kind == "ENTRYPOINT"]
    if not entrypoint or entrypoint[-1][:2] != ["/usr/bin/tini", "--"]:
        problems.append("tini must be PID 1: ENTRYPOINT [\"/usr/bin/tini\", \"--\", ...]")
    fetches = [i for i, (kind, a) in index.items() if kind == "RUN" and "maintenance.spark.jars fetch" in a]
    jars_env = any(kind == "ENV" and re.search(r"(^|\s)ICEMAINT_JARS=", a) for kind, a in steps)
    package = next((i for i, (kind, a) in index.items() if kind == "COPY" and re.search(r"(^|\s)maintenance(\s|/)", a) and "jars.py" not in a
                    and "__init__.py" not in a), None)
    if not fetches or not jars_env or package is None or fetches[0] > package:
        problems.append("the pinned jars must be fetched (maintenance.spark.jars fetch) into $ICEMAINT_JARS before the code is copied")
    for i in fetches:
        purposes = re.search(r"--for\s+(\S+)", index[i][1])
        if purposes is None or "flink" in purposes.group(1).split(","):
            problems.append("the jars fetch must name what the daemon runs (--for spark,s3a): no Flink runtime in the image")
    for kind, args in steps:
        if kind == "RUN" and ("apt-get install" in args or "setup-system.sh" in args) and not ("apt-get clean" in args and "/var/lib/apt/lists" in args):
            problems.append("apt's downloaded packages and lists must go in the layer that installs (apt-get clean, rm -rf /var/lib/apt/lists/*)")
    stages = dockerfile_stages(steps)
    if not steps or steps[0][0] != "ARG" or not re.fullmatch(r"BASE=python:3\.11-slim-bookworm", steps[0][1]) or not stages or stages[0][1] != "${BASE}":
        problems.append("the base image is the build argument BASE (ARG BASE=python:3.11-slim-bookworm, then FROM ${BASE})")
    shipped = shipped_stages(stages)
    if len(shipped) == len(stages):
        problems.append("the venv, the jars and the code are made in a build stage the image is not built FROM (multi-stage)")
    for name, _, instructions in shipped:
        leaks = sorted({word for kind, args in instructions for word in BUILD_ONLY if word in args})
        leaks += [args for kind, args in instructions if kind == "COPY" and "--from=" in args and ("/etc/ssl" in args or "ca-certificates" in args)]
        if leaks:
            problems.append(f"the build's CA certificates must stay out of the shipped stages: stage {name} has {', '.join(leaks)}")
    health = [a for kind, a in steps if kind == "HEALTHCHECK"]
    if not health or "9464" in health[-1] or "/livez" not in health[-1] or "metrics_port" not in health[-1]:
        problems.append("HEALTHCHECK must probe /livez on the configured daemon.metrics_port (not a hard-coded 9464)")
    users = [a for kind, a in steps if kind == "USER"]
    if not users or users[-1].split(":")[0] in ("root", "0"):
        problems.append("the image must run as a non-root USER")
    return problems


DOCKERFILE = (REPO / "Dockerfile").read_text()


def test_the_dockerfile_keeps_its_rules() -> None:
    assert dockerfile_problems(DOCKERFILE) == []


@pytest.mark.parametrize(
    "old, new, expected",
    [
        ("pip install -r /tmp/requirements.txt", "true", "dependencies must be installed"),
        ("pip install -r /tmp/requirements.txt", "pip install -r /tmp/requirements.txt '.[dev]'", "no dev extras"),
        ("pip install --no-deps --no-index", "pip install --no-deps -e", "not be installed editable"),
        ("PIP_NO_CACHE_DIR=1", "PIP_NO_CACHE_DIR=0", "no cache"),
        ('ENTRYPOINT ["/usr/bin/tini", "--", "icemaint"]', 'ENTRYPOINT ["icemaint"]', "tini must be PID 1"),
        ("python -m maintenance.spark.jars fetch --for spark,s3a", "true", "pinned jars"),
        ("ICEMAINT_JARS=/opt/icemaint/jars\n", "JARS=/opt/icemaint/jars\n", "pinned jars"),
        ("fetch --for spark,s3a", "fetch --for spark,s3a,flink", "no Flink runtime"),
        ("fetch --for spark,s3a", "fetch", "no Flink runtime"),
        ("    && apt-get clean \\\n", "", "apt's downloaded packages"),
        ("ARG BASE=python:3.11-slim-bookworm", "ARG BASE=python:3.11", "build argument BASE"),
        ("FROM ${BASE} AS runtime", "FROM python:3.11-slim-bookworm AS runtime", "build argument BASE"),
        ("FROM runtime\n", "FROM build\n", "CA certificates must stay out"),
        ("COPY --from=build /opt/icemaint/jars /opt/icemaint/jars", "COPY --from=build /etc/ssl/certs /etc/ssl/certs", "CA certificates must stay out"),
        ("{d.metrics_port}/livez", "9464/livez", "HEALTHCHECK"),
        ("/livez'", "/healthz'", "HEALTHCHECK"),
        ("USER 10001:10001", "USER root", "non-root"),
    ],
)
def test_a_broken_copy_of_the_dockerfile_is_caught(old: str, new: str, expected: str) -> None:
    assert old in DOCKERFILE
    problems = dockerfile_problems(DOCKERFILE.replace(old, new))
    assert any(expected in p for p in problems), problems


@pytest.mark.process
def test_the_healthcheck_probes_livez_on_the_configured_port(tmp_path: Path) -> None:
    """The HEALTHCHECK's own command, run here: healthy on 200 from /livez at the port the
    config names, unhealthy on 503."""
    command = json.loads(next(args for kind, args in dockerfile_instructions(DOCKERFILE) if kind == "HEALTHCHECK").partition("CMD ")[2])
    status = {"code": 200}
    paths: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            paths.append(self.path)
            self.send_response(status["code"] if self.path == "/livez" else 404)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        config = tmp_path / "icemaint.yaml"
        config.write_text(f"daemon:\n  metrics_port: {server.server_address[1]}\n  metrics_host: 0.0.0.0\n")
        env = {**os.environ, "ICEMAINT_CONFIG": str(config), "ICEMAINT_HOME": str(tmp_path / "home")}
        assert command[0] == "python"
        healthy = subprocess.run([sys.executable, *command[1:]], env=env, capture_output=True, timeout=60)
        status["code"] = 503
        unhealthy = subprocess.run([sys.executable, *command[1:]], env=env, capture_output=True, timeout=60)
    finally:
        server.shutdown()
    assert healthy.returncode == 0, healthy.stderr
    assert unhealthy.returncode != 0
    assert paths == ["/livez", "/livez"]


# --- Packaging ---------------------------------------------------------------------------


def test_the_wheel_lists_every_package_and_ships_migrations_and_policies() -> None:
    """pyproject.toml lists the packages (see its comment): a new folder of maintenance/
    missing there would be missing from the image. The repository's migrations/ and
    policies/ are mapped into the package, with every file they hold."""
    tomllib = pytest.importorskip("tomllib")
    from setuptools import find_namespace_packages

    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    mapped = setuptools["package-dir"]
    assert mapped == {"maintenance.migrations": "migrations", "maintenance.policies": "policies"}
    found = {p for p in find_namespace_packages(where=str(REPO), include=["maintenance", "maintenance.*"]) if "__pycache__" not in p}
    assert set(setuptools["packages"]) - set(mapped) - {"maintenance.migrations.versions"} == found
    for package, folder in mapped.items():
        patterns = setuptools["package-data"][package]
        files = {p.relative_to(REPO / folder).as_posix() for p in (REPO / folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts}
        shipped = {p.relative_to(REPO / folder).as_posix() for pattern in patterns for p in (REPO / folder).glob(pattern)}
        python = {f for f in files if f.endswith(".py")}  # modules of the listed packages
        assert files - python == shipped, f"{folder}/: files no package-data pattern ships"
