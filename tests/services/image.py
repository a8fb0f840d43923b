"""The image built from nothing on the test machine: a Debian base made with debootstrap,
then the repository's Dockerfile on it.

No image registry is reachable here, so the Dockerfile's default base (the official Python
image) cannot be pulled. Debian's own packages can: `debootstrap --variant=minbase` makes a
bookworm root file system from the mirror apt already uses, and `docker import` turns it
into the base (BASE build argument), where scripts/setup-system.sh installs Debian's
python3. HTTPS from here may pass a proxy that re-signs it: the machine's extra CA
certificates (those update-ca-certificates adds, /usr/local/share/ca-certificates) go to
the build stage through the EXTRA_CA_CERTS build argument, whose value the docker client
reads from its environment, so no command line carries it.

Docker's legacy builder builds it: Debian's docker.io ships no buildx, which BuildKit needs
from this client, and the Dockerfile needs nothing BuildKit alone can do.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

from tests.services.docker_engine import DockerEngine, DockerError

DEFAULT_MIRROR = "http://deb.debian.org/debian"
SUITE = "bookworm"
EXTRA_CA_FOLDER = Path("/usr/local/share/ca-certificates")
DEBOOTSTRAP_TIMEOUT_S = 600
BUILD_TIMEOUT_S = 900
# Left out of the base: the packages debootstrap downloaded and apt's lists (the Dockerfile
# updates them first), as the official Debian images leave them out.
BASE_EXCLUDES = ("./var/cache/apt/archives/*.deb", "./var/lib/apt/lists/*", "./debootstrap")
# What the official slim images tell dpkg not to install (their /etc/dpkg/dpkg.cfg.d/docker):
# documentation but its copyright files, manuals, translations. The base is made so too,
# so the image built on it is close to one built on the official Python image.
DPKG_EXCLUDES = """\
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
"""


def apt_mirror(suite: str = SUITE) -> str:
    """The mirror apt uses here for `suite`'s packages (sources.list or deb822 alike)."""
    try:
        done = subprocess.run(["apt-get", "indextargets", "--format", "$(SITE) $(RELEASE) $(IDENTIFIER)"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return DEFAULT_MIRROR
    for line in done.stdout.splitlines():
        site, _, rest = line.partition(" ")
        if rest == f"{suite} Packages":
            return site
    return DEFAULT_MIRROR


def extra_ca_certs(folder: Path = EXTRA_CA_FOLDER) -> str:
    """The machine's own CA certificates (PEM), beside the ones Debian ships; empty if none."""
    if not folder.is_dir():
        return ""
    return "\n".join(p.read_text().strip() for p in sorted(folder.rglob("*.crt")) if p.is_file())


def make_base(engine: DockerEngine, folder: Path, tag: str, log: Path) -> float:
    """debootstrap a minimal bookworm into `folder` and import it as `tag`; the seconds it took.
    The root file system is removed afterwards (the image holds it)."""
    started = time.monotonic()
    rootfs = folder / "rootfs"
    command = ["debootstrap", "--variant=minbase", "--include=ca-certificates", SUITE, str(rootfs), apt_mirror()]
    with log.open("ab") as out:
        done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, timeout=DEBOOTSTRAP_TIMEOUT_S)
    if done.returncode != 0:
        raise DockerError(f"debootstrap exited {done.returncode}; log {log}:\n" + "\n".join(log.read_text(errors="replace").splitlines()[-15:]))
    try:
        slim(rootfs)
        tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", *(f"--exclude={p}" for p in BASE_EXCLUDES), "."], stdout=subprocess.PIPE)
        assert tar.stdout is not None
        imported = subprocess.run(["docker", "import", "-", tag], stdin=tar.stdout, capture_output=True, text=True, env=engine.client_env(), timeout=300)
        tar.stdout.close()
        tar.wait(timeout=60)
        if imported.returncode != 0 or tar.returncode != 0:
            raise DockerError(f"docker import exited {imported.returncode} (tar {tar.returncode}): {imported.stderr.strip()[-500:]}")
    finally:
        shutil.rmtree(rootfs, ignore_errors=True)
    return time.monotonic() - started


def slim(rootfs: Path) -> None:
    """Make the root file system as DPKG_EXCLUDES would have, and keep dpkg to it."""
    (rootfs / "etc/dpkg/dpkg.cfg.d/excludes").write_text(DPKG_EXCLUDES)
    for path in (rootfs / "usr/share/doc").rglob("*"):
        if not path.is_dir() and path.name != "copyright":
            path.unlink()
    for folder in ("man", "groff", "info", "lintian", "linda", "locale"):
        for path in (rootfs / "usr/share" / folder).glob("*"):
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()


def build_image(engine: DockerEngine, context: Path, tag: str, base: str, log: Path) -> float:
    """`docker build` of `context`'s Dockerfile on `base`, with the host's network; the seconds
    it took. The build's output goes to `log`."""
    started = time.monotonic()
    args = ["build", "--network", "host", "--build-arg", f"BASE={base}", "-t", tag]
    env = {"DOCKER_BUILDKIT": "0"}
    certs = extra_ca_certs()
    if certs:
        args += ["--build-arg", "EXTRA_CA_CERTS"]  # no value: the client takes it from env
        env["EXTRA_CA_CERTS"] = certs
    engine.docker(*args, str(context), timeout=BUILD_TIMEOUT_S, env=env, stdout=log)
    return time.monotonic() - started
