"""A copy of the project whose books have print-size JPEG covers (2400x3600 px, ~3 MB), as a
publisher has them: it builds and serves like the real one, for what a phone downloads."""

from __future__ import annotations

import re
from pathlib import Path

from PIL import Image, ImageChops, ImageDraw, ImageFilter

from publisher.content.books import BOOKS
from tests.support import copy_project

COVER_SIZE = (2400, 3600)


def print_cover(path: Path, seed: int) -> None:
    """A photo-like cover at print resolution: gradients, shapes and film grain, JPEG quality 92."""
    width, height = COVER_SIZE
    ramp = Image.linear_gradient("L").resize(COVER_SIZE)
    image = Image.merge("RGB", (ramp, ramp.rotate(90 + seed * 30).resize(COVER_SIZE), ImageChops.invert(ramp)))
    draw = ImageDraw.Draw(image)
    draw.ellipse((300, 900 + seed * 60, 2100, 2700), fill=(190, 120 - seed * 20, 60 + seed * 40))
    draw.rectangle((200, 200, 2200, 700), fill=(250, 240, 220))
    for line in range(40):
        draw.line((0, line * 90, width, height - line * 90), fill=(40 + line * 5, 80, 120 + seed * 30), width=8)
    grain = Image.effect_noise(COVER_SIZE, 40).filter(ImageFilter.GaussianBlur(1.0)).convert("RGB")
    ImageChops.add(image, grain, scale=1.0, offset=-128).save(path, "JPEG", quality=92)


def make_project(root: Path) -> Path:
    copy_project(root)
    books = root / "publisher" / "content" / "books.py"
    text = books.read_text()
    for seed, book in enumerate(BOOKS):
        jpeg = f"/images/covers/{book.slug}-print.jpg"
        print_cover(root / "assets" / jpeg.lstrip("/"), seed)
        text, count = re.subn(rf'cover_image="{re.escape(book.cover_image)}"', f'cover_image="{jpeg}"', text)
        assert count == 1, f"{book.slug}: its cover_image is not written once in {books}"
    books.write_text(text)
    return root
