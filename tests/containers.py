"""The image, built from the Dockerfile with podman (through ``scripts/podman``; the base image from
``scripts/stand-in-base-image.sh`` when no registry is reachable), and containers of it on 127.0.0.1."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.compose import ServiceSpec
from tests.support import FORM_SECRET, PROJECT_ROOT, QUICK_FILL_ENV, log_excerpt, start_on_free_ports, wait_until

PODMAN = str(PROJECT_ROOT / "scripts" / "podman")
STAND_IN_BASE_IMAGE = PROJECT_ROOT / "scripts" / "stand-in-base-image.sh"
INSTALL_COMMAND = "apt-get update && apt-get install -y podman runc debootstrap"


def engine_problem() -> str | None:
    missing = [tool for tool in ("podman", "runc", "debootstrap") if shutil.which(tool) is None]
    if missing:
        return f"The container tests need {', '.join(missing)}. Install them as root:\n  {INSTALL_COMMAND}"
    if os.geteuid() != 0:
        return (
            "The container tests build and run the image with podman as root (the way it is set up and "
            "tested on this machine kind): run `make test` as root."
        )
    return None


def podman(*args: str, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([PODMAN, *args], capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise RuntimeError(f"podman {' '.join(args)} failed ({result.returncode}):\n{result.stderr[-3000:]}")
    return result


def build_image(tag: str, log_path: Path) -> float:
    """The operator's `make image` with ``tag``; the seconds of its build, not the base image's bootstrap."""
    with log_path.open("wb") as log:
        subprocess.run([str(STAND_IN_BASE_IMAGE)], stdout=log, stderr=subprocess.STDOUT, check=True, timeout=900)
        started = time.monotonic()
        completed = subprocess.run(
            ["make", "--no-print-directory", "image", f"IMAGE={tag}"],
            cwd=PROJECT_ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            timeout=1200,
        )
    if completed.returncode != 0:
        raise RuntimeError(f"`make image` failed; log:\n{log_path.read_text(errors='replace')[-4000:]}")
    return time.monotonic() - started


def image_config(tag: str) -> dict:
    return json.loads(podman("image", "inspect", tag).stdout)[0]


def stored_subscribers(container: Container) -> list[tuple[str, str, str]]:
    exported = container.exec("publisher-gateway", "subscribers").stdout
    return [(row["email"], row["name"], row["status"]) for row in csv.DictReader(io.StringIO(exported))]


class Volume:
    def __init__(self) -> None:
        self.name = f"publisher-test-{uuid.uuid4().hex[:8]}"
        podman("volume", "create", self.name)

    def remove(self) -> None:
        podman("volume", "rm", "--force", self.name, check=False)


@dataclass(eq=False)
class Container:
    """One container of the image, its server on a free port of 127.0.0.1 (host network), chosen at start()."""

    image: str
    env: dict[str, str] = field(default_factory=dict)
    volume: Volume | None = None
    read_only: bool = False
    command: list[str] = field(default_factory=list)
    tmpfs: list[str] | None = None
    secrets: dict[str, str] = field(default_factory=dict)
    cap_drop: list[str] = field(default_factory=list)
    security_opt: list[str] = field(default_factory=list)
    port: int | None = None
    secrets_dir: Path | None = None
    mounts: dict[str, str] = field(default_factory=dict)  # host path: its path inside, read-only

    def __post_init__(self) -> None:
        self.name = f"publisher-test-{uuid.uuid4().hex[:8]}"
        self.tmpfs = self.tmpfs if self.tmpfs is not None else (["/tmp"] if self.read_only else [])
        if self.secrets:  # as Compose mounts them: one read-only file each under /run/secrets
            self.secrets_dir = Path(tempfile.mkdtemp(prefix="publisher-secrets-"))
            for name, value in self.secrets.items():
                (self.secrets_dir / name).write_text(value)

    @classmethod
    def of_service(cls, spec: ServiceSpec) -> Container:
        shared = ("read_only", "command", "tmpfs", "secrets", "cap_drop", "security_opt")
        return cls(spec.image, env=spec.environment, **{name: getattr(spec, name) for name in shared})

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _options(self) -> list[str]:
        options = ["--name", self.name, "--env", "HOST=127.0.0.1"]
        if self.port is not None:  # a one-shot container (run_to_completion) serves nothing
            options += ["--env", f"PORT={self.port}"]
        env = {**QUICK_FILL_ENV, **self.env}
        if not {"PUBLISHER_FORM_SECRET", "PUBLISHER_FORM_SECRET_FILE"} & set(env):
            env = {"PUBLISHER_FORM_SECRET": FORM_SECRET, **env}  # publisher-serve requires one
        for key, value in env.items():
            options += ["--env", f"{key}={value}"]
        if self.volume:
            options += ["--volume", f"{self.volume.name}:/data"]
        if self.read_only:
            options.append("--read-only")
        for path in self.tmpfs or []:
            options += ["--tmpfs", path]
        if self.secrets_dir is not None:
            for secret in sorted(self.secrets_dir.iterdir()):
                options += ["--volume", f"{secret}:/run/secrets/{secret.name}:ro"]
        for host_path, inside in self.mounts.items():
            options += ["--volume", f"{host_path}:{inside}:ro"]
        for capability in self.cap_drop:
            options += ["--cap-drop", capability]
        for option in self.security_opt:
            options += ["--security-opt", option]
        return options

    def start(self, timeout: float = 90) -> None:
        """Run it on a free port of the host network; returns once it answers."""
        start_on_free_ports(lambda port: self._start_on(port, timeout))

    def _start_on(self, port: int, timeout: float) -> None:
        self.port = port
        podman("run", "--detach", *self._options(), self.image, *self.command)
        try:
            self.wait_ready(timeout)
        except BaseException:
            podman("rm", "--force", "--time", "0", self.name, check=False)  # its name is free for the next try
            raise

    def run_to_completion(self) -> subprocess.CompletedProcess[str]:
        """A one-shot container (a release step): runs its command, exits; its output and exit code."""
        return podman("run", *self._options(), self.image, *self.command, timeout=120, check=False)

    def wait_ready(self, timeout: float = 90) -> None:
        def ready() -> bool:
            if self.state()["Status"] not in ("running", "created", "configured"):
                raise RuntimeError(f"Container {self.name} exited; logs:\n{log_excerpt(self.logs())}")
            try:
                return httpx.get(f"{self.base_url}/ping", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(ready, timeout, f"container {self.name} on port {self.port}", interval=0.2)

    def state(self) -> dict:
        return json.loads(podman("inspect", "--format", "{{json .State}}", self.name).stdout)

    def exec(self, *command: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return podman("exec", self.name, *command, check=check)

    def logs(self) -> str:
        result = podman("logs", self.name, check=False)
        return result.stdout + result.stderr

    def restart(self) -> None:
        podman("restart", "--time", "20", self.name)
        self.wait_ready()

    def send_sigterm(self) -> float:
        """SIGTERM to the main process; the monotonic moment just before it was sent."""
        sent_at = time.monotonic()
        podman("kill", "--signal", "TERM", self.name)
        return sent_at

    def wait_exit(self, timeout: float = 30) -> int:
        result = podman("wait", self.name, timeout=timeout)
        return int(result.stdout.strip().splitlines()[-1])

    def remove(self) -> None:
        podman("rm", "--force", "--volumes", "--time", "0", self.name, check=False)  # and its anonymous /data
        if self.secrets_dir is not None:
            shutil.rmtree(self.secrets_dir, ignore_errors=True)
