"""The site's images as the build serves them: each variant's name carries its source's content
hash (immutable files); without ``assets/`` (the image), sizes and hashes come from the build's manifest."""

from __future__ import annotations

import hashlib
import io
import json
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

from publisher.content import books
from publisher.content.authors import AUTHORS

ASSETS_DIR = Path("assets")
MANIFEST = Path(".web") / "backend" / "images.json"
PROJECT_DIR = Path(__file__).resolve().parents[2]
VARIANTS_URL = "/images/variants"
RASTER_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp")

# The CSS widths each place shows an image at, for 1x and 2x screens.
COVER_WIDTHS = (240, 320, 480, 640)
PORTRAIT_WIDTHS = (160, 192, 320, 384)
SHARE_WIDTH, SHARE_HEIGHT = 1200, 630
# Bumped when the encoding (build/image_variants.py) changes, so every variant gets a new name.
ENCODING = "1"
MIME = {"avif": "image/avif", "webp": "image/webp", "jpg": "image/jpeg", "png": "image/png"}


class ImageProblem(RuntimeError):
    """The message says which image and why."""


@dataclass(frozen=True)
class ImageInfo:
    src: str  # as the content names it: "/images/covers/x.jpg", under assets/
    width: int
    height: int
    digest: str  # of the file's bytes and ENCODING
    alpha: bool = False

    @property
    def is_svg(self) -> bool:
        return self.src.lower().endswith(".svg")

    @property
    def fallback(self) -> str:
        return "png" if self.alpha else "jpg"

    def widths(self, wanted: Iterable[int]) -> tuple[int, ...]:
        """Never enlarged."""
        fitting = sorted({width for width in wanted if width <= self.width})
        return tuple(fitting) or (self.width,)

    def height_at(self, width: int) -> int:
        return round(self.height * width / self.width)

    def variant_url(self, width: int, fmt: str) -> str:
        return f"{VARIANTS_URL}/{Path(self.src).stem}-{self.digest}-{width}w.{fmt}"

    @property
    def share_url(self) -> str:
        return f"{VARIANTS_URL}/{Path(self.src).stem}-{self.digest}-share.jpg"


def largest_url(src: str) -> str:
    info = describe(src)
    return src if info.is_svg else info.variant_url(info.widths(COVER_WIDTHS)[-1], info.fallback)


def source_path(src: str) -> Path:
    if not src.startswith("/"):
        raise ImageProblem(f"{src!r}: an image path must start with / (a file under assets/)")
    return ASSETS_DIR / src.lstrip("/")


def describe(src: str) -> ImageInfo:
    """From its file or the build's manifest, here, else beside the package (a command run from elsewhere)."""
    relative = source_path(src)
    for root in dict.fromkeys((Path.cwd(), PROJECT_DIR)):  # each once
        path = root / relative
        if path.exists():
            stat = path.stat()
            return _read(src, path, stat.st_mtime_ns, stat.st_size)
        manifest_path = root / MANIFEST
        manifest = _manifest(manifest_path, manifest_path.stat().st_mtime_ns) if manifest_path.exists() else {}
        if src in manifest:
            return ImageInfo(**manifest[src])
    raise ImageProblem(f"{src!r}: no such file under {ASSETS_DIR}/ (and the build's {MANIFEST} does not list it)")


@lru_cache(maxsize=64)
def _read(src: str, path: Path, _mtime_ns: int, _size: int) -> ImageInfo:
    data = path.read_bytes()
    digest = hashlib.sha256(data + ENCODING.encode()).hexdigest()[:12]
    suffix = path.suffix.lower()
    if suffix == ".svg":
        width, height = _svg_size(data, src)
        return ImageInfo(src, width, height, digest)
    if suffix not in RASTER_SUFFIXES:
        raise ImageProblem(f"{src!r}: use a JPEG, PNG, WebP or SVG image")
    from PIL import Image, ImageOps  # noqa: PLC0415 - build-only dependency, absent from the image

    try:
        with Image.open(io.BytesIO(data)) as opened:
            image = ImageOps.exif_transpose(opened)
            alpha = image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info)
            return ImageInfo(src, image.width, image.height, digest, alpha)
    except (OSError, ValueError) as exc:
        raise ImageProblem(f"{src!r}: not an image Pillow can read ({exc})") from None


def _svg_size(data: bytes, src: str) -> tuple[int, int]:
    root = ET.fromstring(data)
    width, height = root.get("width", ""), root.get("height", "")
    if width.replace(".", "", 1).isdigit() and height.replace(".", "", 1).isdigit():
        return round(float(width)), round(float(height))
    box = (root.get("viewBox") or "").replace(",", " ").split()
    if len(box) == 4:
        return round(float(box[2])), round(float(box[3]))
    raise ImageProblem(f"{src!r}: an SVG needs width and height, or a viewBox")


@lru_cache(maxsize=4)
def _manifest(path: Path, _mtime_ns: int) -> dict[str, dict]:
    return json.loads(path.read_text())


def write_manifest(infos: Iterable[ImageInfo]) -> None:
    MANIFEST.parent.mkdir(parents=True, exist_ok=True)
    MANIFEST.write_text(json.dumps({info.src: asdict(info) for info in infos}, indent=2) + "\n")


@dataclass(frozen=True)
class Wanted:
    info: ImageInfo
    widths: tuple[int, ...] = ()  # CSS-pixel widths at 1x and 2x: the variants
    share: bool = False  # also a 1200x630 share image


def site_images() -> list[Wanted]:
    covers = [Wanted(describe(book.cover_image), COVER_WIDTHS, share=True) for book in books.BOOKS]
    return covers + [Wanted(describe(author.author_image), PORTRAIT_WIDTHS) for author in AUTHORS]


def planned_files(wanted: Iterable[Wanted]) -> dict[str, tuple[Wanted, str, int | None]]:
    """Every variant file name the markup uses: name -> (what, format, width; None for the share image)."""
    files: dict[str, tuple[Wanted, str, int | None]] = {}
    for item in wanted:
        info = item.info
        if not info.is_svg:
            for width in info.widths(item.widths):
                for fmt in ("avif", "webp", info.fallback):
                    files[Path(info.variant_url(width, fmt)).name] = (item, fmt, width)
        if item.share:
            files[Path(info.share_url).name] = (item, "jpg", None)
    return files
