"""A Docker Engine of the test's own: `dockerd` started by hand in a folder, stopped after.

The container test must build and run the image on a machine with no registry and no
Docker service, without leaving anything behind. A `dockerd` with its defaults would add a
bridge (docker0), turn on IP forwarding and set the FORWARD policy to DROP on the host, and
leave all three after it stops; its socket, data and state would go to /var/run and
/var/lib/docker, where another engine may live. So this one runs with:
- its socket, data root, exec root (where it starts its own containerd), pid file and an
  empty daemon.json all under the test's folder;
- `--bridge=none --iptables=false --ip-forward=false --ip-masq=false`: no network of its
  own; builds and containers use the host's network (`--network host`), the only one.
`HostNetwork` records what such a daemon could change (forwarding sysctls, interfaces,
iptables and nftables rules where they can be read), so the test can show it did not.
Besides its folder, the engine writes where no flag moves it: containerd's shim sockets
(/run/containerd/s) and its `opt` plugin's folder (/opt/containerd); `stop` removes those
it created, once empty. Its trust key goes to the folder (daemon.json), and its
containers' cgroups under a parent of its own, removed after it.

Every client call is `docker` with DOCKER_HOST on that socket, DOCKER_CONFIG in the folder
(no user's credentials or settings) and a timeout.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

START_TIMEOUT_S = 60.0
# Made by dockerd or its containerd wherever they run, whatever the flags say.
HOST_FOLDERS = (Path("/run/containerd/s"), Path("/run/containerd"), Path("/opt/containerd/bin"), Path("/opt/containerd/lib"), Path("/opt/containerd"))
CGROUPS = Path("/sys/fs/cgroup")
STOP_TIMEOUT_S = 60.0
FORWARDING = ("/proc/sys/net/ipv4/ip_forward", "/proc/sys/net/ipv6/conf/all/forwarding")


class EngineUnavailable(RuntimeError):
    """No Docker Engine can run here (the reason is the message, one line)."""


class DockerError(RuntimeError):
    """A docker command failed (its command and output's tail are the message)."""


def missing_tools() -> list[str]:
    """What this machine lacks to run an engine; empty when it can try."""
    missing = [name for name in ("dockerd", "docker") if shutil.which(name) is None]
    if os.geteuid() != 0:
        missing.append("root (dockerd runs as root)")
    return missing


class HostNetwork:
    """What a Docker daemon could change in the host's network, as it is now."""

    @staticmethod
    def snapshot() -> dict[str, str]:
        state = {path: Path(path).read_text().strip() for path in FORWARDING if Path(path).exists()}
        bridge = Path("/proc/sys/net/bridge")
        if bridge.is_dir():  # only while br_netfilter is loaded
            state.update({str(p): p.read_text().strip() for p in sorted(bridge.iterdir())})
        state["interfaces"] = " ".join(sorted(p.name for p in Path("/sys/class/net").iterdir()))
        for command in (["iptables-save"], ["ip6tables-save"], ["nft", "list", "ruleset"]):
            if shutil.which(command[0]) is None:
                continue
            try:
                done = subprocess.run(command, capture_output=True, text=True, timeout=30)
            except subprocess.TimeoutExpired:
                state[command[0]] = "(timed out)"
                continue
            # The dumps' comment lines carry the time they were taken.
            state[command[0]] = "\n".join(line for line in done.stdout.splitlines() if not line.startswith("#")) if done.returncode == 0 else "(unreadable)"
        return state


@dataclass
class DockerEngine:
    """A running dockerd of the test's own, and its client."""

    folder: Path
    process: subprocess.Popen[bytes]
    log: Path
    startup_s: float
    cgroup_parent: str
    created: tuple[Path, ...]  # of HOST_FOLDERS, those that were not there before it started

    @property
    def host(self) -> str:
        return f"unix://{self.folder / 'docker.sock'}"

    def client_env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("DOCKER_")}
        return {**env, "DOCKER_HOST": self.host, "DOCKER_CONFIG": str(self.folder / "client"), "DOCKER_CLI_HINTS": "false", **(extra or {})}

    def docker(self, *args: str, timeout: float, env: Mapping[str, str] | None = None, check: bool = True,
               stdout: Path | None = None) -> subprocess.CompletedProcess[str]:
        """`docker ARGS` against this engine; `env` adds variables (values the command names
        only, such as `-e NAME`, come from there); `stdout` sends the output to a file."""
        command = ["docker", *args]
        if stdout is not None:
            with stdout.open("w") as out:
                done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, text=True, env=self.client_env(env), timeout=timeout)
            done.stdout = stdout.read_text(errors="replace")
        else:
            done = subprocess.run(command, capture_output=True, text=True, env=self.client_env(env), timeout=timeout)
        if check and done.returncode != 0:
            tail = "\n".join(((done.stdout or "") + (done.stderr or "")).splitlines()[-30:])
            raise DockerError(f"docker {' '.join(args[:2])} exited {done.returncode}:\n{tail}")
        return done

    def running(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        """Stop every container, then dockerd (and with it the containerd it started); whatever
        it left mounted under its folder is unmounted, so the folder can be removed."""
        if self.running():
            ids = self.docker("ps", "-q", timeout=30, check=False).stdout.split()
            if ids:
                self.docker("rm", "-f", *ids, timeout=120, check=False)
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)
        for mount in reversed(mounts_under(self.folder)):
            subprocess.run(["umount", "-l", mount], capture_output=True, timeout=30)
        for path in [*self.created, *self.cgroups()]:
            try:
                path.rmdir()  # only when empty: whatever else is there is not the engine's
            except OSError:
                pass

    def leftovers(self) -> list[Path]:
        """What the engine made outside its folder and did not remove."""
        return [p for p in self.created if p.exists()] + self.cgroups()

    def cgroups(self) -> list[Path]:
        """The parent cgroup of its containers, in each hierarchy (v1) or the one (v2)."""
        return sorted([*CGROUPS.glob(f"*/{self.cgroup_parent}"), *CGROUPS.glob(self.cgroup_parent)])


def mounts_under(folder: Path) -> list[str]:
    prefix = str(folder.resolve()) + "/"
    points = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()]
    return [p.replace("\\040", " ") for p in points if p.startswith(prefix)]


def start_engine(folder: Path, *, args: Sequence[str] = ()) -> DockerEngine:
    """Start dockerd with everything under `folder`; raises EngineUnavailable (one line) when
    it cannot run here. The folder's path is kept short by the caller: unix socket paths are
    limited to 107 bytes, and containerd's live under the exec root."""
    missing = missing_tools()
    if missing:
        raise EngineUnavailable(f"missing {', '.join(missing)} (make setup installs docker.io: scripts/setup-docker.sh)")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "client").mkdir(exist_ok=True)
    # Its trust key, which it writes to /etc/docker by default.
    (folder / "daemon.json").write_text(json.dumps({"deprecated-key-path": str(folder / "key.json")}) + "\n")
    cgroup_parent = f"icemaint-test-{folder.parent.name}-{os.getpid()}"
    created = tuple(p for p in HOST_FOLDERS if not p.exists())
    log = folder / "dockerd.log"
    command = [
        "dockerd", f"--config-file={folder / 'daemon.json'}", f"--host=unix://{folder / 'docker.sock'}",
        f"--data-root={folder / 'data'}", f"--exec-root={folder / 'exec'}", f"--pidfile={folder / 'docker.pid'}",
        "--bridge=none", "--iptables=false", "--ip-forward=false", "--ip-masq=false", f"--cgroup-parent=/{cgroup_parent}", *args,
    ]
    started = time.monotonic()
    with log.open("ab") as out:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    engine = DockerEngine(folder, process, log, 0.0, cgroup_parent, created)
    deadline = started + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            engine.stop()
            raise EngineUnavailable(f"dockerd exited with {process.returncode}: {last_error(log)}")
        if (folder / "docker.sock").exists() and engine.docker("version", timeout=10, check=False).returncode == 0:
            engine.startup_s = time.monotonic() - started
            return engine
        time.sleep(0.3)
    engine.stop()
    raise EngineUnavailable(f"dockerd did not answer within {START_TIMEOUT_S:.0f} s: {last_error(log)}")


def last_error(log: Path) -> str:
    """The last line of dockerd's log that says what went wrong (one line)."""
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    errors = [line for line in lines if "level=error" in line or "level=fatal" in line or "failed" in line.lower()]
    return (errors or lines or ["(no output)"])[-1][-300:]
