"""An image as the build serves it: <picture> with AVIF and WebP variants and a JPEG/PNG fallback, its
size from the file (the layout holds while it loads); an SVG stays one <img>."""

from __future__ import annotations

from collections.abc import Sequence

import reflex as rx

from publisher.content import images


def picture(
    src: str, alt: str, *, widths: Sequence[int], sizes: str, class_name: str, priority: bool = False
) -> rx.Component:
    info = images.describe(src)
    shown = info.widths(widths)
    largest = shown[-1]

    def srcset(fmt: str) -> str:
        return ", ".join(f"{info.variant_url(width, fmt)} {width}w" for width in shown)

    size = {"width": str(info.width), "height": str(info.height)}
    if not info.is_svg:
        size = {
            "srcSet": srcset(info.fallback),
            "sizes": sizes,
            "width": str(largest),
            "height": str(info.height_at(largest)),
        }
    img = rx.el.img(
        src=src if info.is_svg else info.variant_url(largest, info.fallback),
        alt=alt,
        custom_attrs={**size, "fetchPriority": "high" if priority else "auto"},
        class_name=class_name,
        loading="eager" if priority else "lazy",
        decoding="async",
    )
    if info.is_svg:
        return img
    return rx.el.picture(
        rx.el.source(type=images.MIME["avif"], custom_attrs={"srcSet": srcset("avif"), "sizes": sizes}),
        rx.el.source(type=images.MIME["webp"], custom_attrs={"srcSet": srcset("webp"), "sizes": sizes}),
        img,
    )
