"""An image as the build serves it: <picture> with AVIF and WebP variants and a JPEG/PNG fallback.

The browser picks the smallest variant that covers the width the image is shown
at (``sizes``) on its screen; width and height come from the file, so the page
keeps its layout while images load. An SVG stays one <img>: it scales itself.
Which files exist, and their names, is decided in content/images.py.
"""

from __future__ import annotations

from collections.abc import Sequence

import reflex as rx

from publisher.content import images


def _loading(priority: bool) -> dict:
    """The first image a visitor sees loads at once and first; the others when they come near."""
    return {"loading": "eager" if priority else "lazy", "decoding": "async"}


def picture(
    src: str, alt: str, *, widths: Sequence[int], sizes: str, class_name: str, priority: bool = False
) -> rx.Component:
    info = images.describe(src)
    priority_attr = {"fetchPriority": "high" if priority else "auto"}
    if info.is_svg:
        return rx.el.img(
            src=src,
            alt=alt,
            custom_attrs={"width": str(info.width), "height": str(info.height), **priority_attr},
            class_name=class_name,
            **_loading(priority),
        )
    shown = info.widths(widths)

    def srcset(fmt: str) -> str:
        return ", ".join(f"{info.variant_url(width, fmt)} {width}w" for width in shown)

    largest = shown[-1]
    return rx.el.picture(
        rx.el.source(type=images.MIME["avif"], custom_attrs={"srcSet": srcset("avif"), "sizes": sizes}),
        rx.el.source(type=images.MIME["webp"], custom_attrs={"srcSet": srcset("webp"), "sizes": sizes}),
        rx.el.img(
            src=info.variant_url(largest, info.fallback),
            alt=alt,
            custom_attrs={
                "srcSet": srcset(info.fallback),
                "sizes": sizes,
                "width": str(largest),
                "height": str(info.height_at(largest)),
                **priority_attr,
            },
            class_name=class_name,
            **_loading(priority),
        ),
    )
