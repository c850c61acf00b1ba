"""The services of the operator's compose.yaml, read (with ``${VAR}`` references filled in as Compose
does) so the tests start exactly those; ``point_at`` aims service URLs at the test's own servers."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

import yaml

from tests.support import PROJECT_ROOT

COMPOSE_FILE = PROJECT_ROOT / "compose.yaml"
_REFERENCE = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:-|:\?)(?P<arg>[^}]*))?\}")


def load() -> dict:
    return yaml.safe_load(COMPOSE_FILE.read_text())


def interpolate(value: str, variables: dict[str, str]) -> str:
    def fill(match: re.Match[str]) -> str:
        name, op, arg = match["name"], match["op"], match["arg"]
        current = variables.get(name, "")
        if current:
            return current
        if op == ":?":
            raise KeyError(f"compose.yaml needs {name}: {arg}")
        return arg if op == ":-" else ""

    return _REFERENCE.sub(fill, value)


@dataclass
class ServiceSpec:
    name: str
    image: str
    command: list[str]
    environment: dict[str, str]
    read_only: bool = False
    tmpfs: list[str] = field(default_factory=list)
    replicas: int = 1
    depends_on: dict[str, str] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)
    cap_drop: list[str] = field(default_factory=list)
    security_opt: list[str] = field(default_factory=list)


def service(name: str, variables: dict[str, str]) -> ServiceSpec:
    compose = load()
    interpolate(str(compose.get("x-required", "")), variables)  # Compose checks the whole file
    spec = compose["services"][name]
    environment = {key: interpolate(str(value), variables) for key, value in (spec.get("environment") or {}).items()}
    return ServiceSpec(
        name=name,
        image=interpolate(spec["image"], variables),
        command=list(spec.get("command") or []),
        environment=environment,
        read_only=bool(spec.get("read_only", False)),
        tmpfs=list(spec.get("tmpfs") or []),
        replicas=int((spec.get("deploy") or {}).get("replicas", 1)),
        depends_on={
            dep: (cond or {}).get("condition", "service_started")
            for dep, cond in (spec.get("depends_on") or {}).items()
        },
        secrets={key: variables.get(compose["secrets"][key]["environment"], "") for key in spec.get("secrets") or []},
        cap_drop=list(spec.get("cap_drop") or []),
        security_opt=list(spec.get("security_opt") or []),
    )


def point_at(environment: dict[str, str], services: dict[str, str]) -> dict[str, str]:
    """The environment with every URL whose host is a compose service aimed at ``services[host]`` ("host:port")."""
    aimed = {}
    for key, value in environment.items():
        parts = urlsplit(value) if "://" in value else None
        if parts and parts.hostname in services:
            userinfo = parts.netloc.rpartition("@")[0]
            netloc = f"{userinfo}@{services[parts.hostname]}" if userinfo else services[parts.hostname]
            value = urlunsplit(parts._replace(netloc=netloc))
        aimed[key] = value
    return aimed
