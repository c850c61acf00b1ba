"""About: the two author cards."""

import reflex as rx

from publisher.content import images, page_copy
from publisher.content.authors import AUTHORS, VIEW_ON_AMAZON
from publisher.content.models import Author
from publisher.web import seo
from publisher.web.components.layout import page_heading
from publisher.web.components.links import external_button
from publisher.web.components.pictures import picture
from publisher.web.pages.registry import site_page


def author_cards() -> dict[str, str]:
    return {author.name: f"{about.route}#{author.slug}" for author in AUTHORS}


def author_card(author: Author, index: int) -> rx.Component:
    heading_id = f"author-{author.slug}-name"
    return rx.el.article(
        picture(
            author.author_image,
            author.image_alt,
            widths=images.PORTRAIT_WIDTHS,
            sizes="(min-width: 640px) 192px, 160px",  # h-40/w-40, sm:w-48
            priority=index == 0,  # the first portrait is About's first image
            class_name="h-40 w-40 shrink-0 rounded-full border-4 border-amber-100 bg-amber-50 object-cover "
            "sm:h-48 sm:w-48",
        ),
        rx.el.div(
            rx.el.h2(author.name, id=heading_id, class_name="font-serif text-2xl font-bold text-stone-900"),
            rx.el.p(author.role, class_name="text-sm font-semibold uppercase tracking-wide text-amber-900"),
            *[
                rx.el.p(paragraph, class_name="mt-3 text-base leading-relaxed text-stone-700")
                for paragraph in author.author_bio
            ],
            external_button(VIEW_ON_AMAZON, str(author.amazon_url), author.name),
        ),
        id=author.slug,
        aria_labelledby=heading_id,
        class_name=(
            "flex flex-col items-center gap-6 rounded-xl border border-amber-200 bg-white p-6 shadow-sm "
            "sm:flex-row sm:items-start"
        ),
    )


def _structured_data():
    return [seo.person(author, author_cards()[author.name]) for author in AUTHORS]


@site_page(route="/about", copy=page_copy.ABOUT, nav_position=2, structured_data=_structured_data)
def about():
    cards = rx.el.div(
        *[author_card(author, index) for index, author in enumerate(AUTHORS)], class_name="flex flex-col gap-8"
    )
    return page_heading(page_copy.ABOUT), cards
