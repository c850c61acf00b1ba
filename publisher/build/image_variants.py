"""Encoding the image variants content/images.py plans (build time only: Pillow and libvips)."""

from __future__ import annotations

import io
import logging
import os
import tempfile
from pathlib import Path

from PIL import Image, ImageCms, ImageFilter, ImageOps

from publisher.content.images import (
    SHARE_HEIGHT,
    SHARE_WIDTH,
    VARIANTS_URL,
    ImageInfo,
    Wanted,
    planned_files,
    source_path,
)

logger = logging.getLogger(__name__)

QUALITY = {"avif": {"quality": 55}, "webp": {"quality": 76, "method": 6}}
JPEG = {"quality": 82, "optimize": True, "progressive": True}


def write_variants(public_dir: Path, wanted: list[Wanted]) -> tuple[int, int]:
    """Make every planned file not made yet, remove those no longer planned; (made, kept)."""
    out = public_dir / VARIANTS_URL.strip("/")
    out.mkdir(parents=True, exist_ok=True)
    files = planned_files(wanted)
    for stale in out.iterdir():
        if stale.name not in files:
            stale.unlink()
    made = 0
    opened: dict[str, Image.Image] = {}
    for name, (item, fmt, width) in sorted(files.items()):
        target = out / name
        if target.exists():
            continue
        source = opened.get(item.info.src) or opened.setdefault(item.info.src, _open_rgb(item.info))
        image = _share_image(source) if width is None else _resized(source, width, item.info.height_at(width))
        _save_atomically(image, target, fmt)
        made += 1
    for image in opened.values():
        image.close()
    if made:
        logger.info("Images: %d variant(s) made, %d unchanged", made, len(files) - made)
    return made, len(files) - made


def _open_rgb(info: ImageInfo) -> Image.Image:
    """The source as sRGB pixels (RGBA with transparency), the right way up."""
    path = source_path(info.src)
    if info.is_svg:
        return _rasterized_svg(path, SHARE_HEIGHT)
    with Image.open(path) as original:
        image = ImageOps.exif_transpose(original)
        image.load()
        profile = image.info.get("icc_profile")
    mode = "RGBA" if info.alpha else "RGB"
    if profile:
        try:
            source = ImageCms.ImageCmsProfile(io.BytesIO(profile))
            # Pillow types it as possibly None, which it is only with inPlace=True.
            return ImageCms.profileToProfile(  # type: ignore[return-value]
                image, source, ImageCms.createProfile("sRGB"), outputMode=mode
            )
        except ImageCms.PyCMSError:
            logger.warning("Images: %s has a colour profile Pillow cannot read; used as it is", info.src)
    return image.convert(mode)


def _rasterized_svg(path: Path, height: int) -> Image.Image:
    import pyvips  # noqa: PLC0415 - build-only dependency, absent from the image

    rendered = pyvips.Image.thumbnail(str(path), 10_000, height=height)
    return Image.open(io.BytesIO(rendered.write_to_buffer(".png"))).convert("RGBA")


def _resized(image: Image.Image, width: int, height: int) -> Image.Image:
    return image.resize((width, height), Image.Resampling.LANCZOS, reducing_gap=3.0)


def _share_image(cover: Image.Image) -> Image.Image:
    """1200x630: the cover whole, on a blurred and dimmed enlargement of itself."""
    opaque = _flattened(cover)
    scale = max(SHARE_WIDTH / opaque.width, SHARE_HEIGHT / opaque.height)
    backdrop = opaque.resize((round(opaque.width * scale), round(opaque.height * scale)), Image.Resampling.BILINEAR)
    left, top = (backdrop.width - SHARE_WIDTH) // 2, (backdrop.height - SHARE_HEIGHT) // 2
    backdrop = backdrop.crop((left, top, left + SHARE_WIDTH, top + SHARE_HEIGHT)).filter(ImageFilter.GaussianBlur(24))
    backdrop = Image.blend(backdrop, Image.new("RGB", backdrop.size, (28, 25, 23)), 0.45)
    margin = 40
    height = SHARE_HEIGHT - 2 * margin
    width = round(opaque.width * height / opaque.height)
    front = _resized(opaque, width, height)
    backdrop.paste(front, ((SHARE_WIDTH - width) // 2, margin))
    return backdrop


def _flattened(image: Image.Image) -> Image.Image:
    if image.mode != "RGBA":
        return image.convert("RGB")
    flat = Image.new("RGB", image.size, (255, 251, 235))  # the site's page colour
    flat.paste(image, mask=image.getchannel("A"))
    return flat


def _save_atomically(image: Image.Image, target: Path, fmt: str) -> None:
    """Through a temporary file: a build stopped half-way leaves no half file."""
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".partial-")
    os.close(handle)
    try:
        if fmt == "jpg":
            _flattened(image).save(temporary, "JPEG", **JPEG)
        elif fmt == "png":
            image.save(temporary, "PNG", optimize=True)
        else:
            image.save(temporary, fmt.upper(), **QUALITY[fmt])
        os.replace(temporary, target)
    finally:
        Path(temporary).unlink(missing_ok=True)
