"""Everything the site says: books, authors, navigation and site constants.

A maintainer changes a title, a bio or a link here and nowhere else; pages,
metadata, structured data and the sitemap all read from this module.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, HttpUrl

NonEmpty = Field(min_length=1)


class _Content(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)


class Book(_Content):
    """A book card on the home page (spec section 3: Book)."""

    slug: str = NonEmpty
    title: str = NonEmpty
    subtitle: str = NonEmpty
    caption: str = NonEmpty
    description: str = NonEmpty
    book_link: HttpUrl
    cover_image: str = NonEmpty  # path under assets/, served from the site root
    image_alt: str = NonEmpty
    cover_width: int = 400
    cover_height: int = 600
    author_names: tuple[str, ...] = Field(min_length=1)


class Author(_Content):
    """An author card on the About page (spec section 3: Author)."""

    slug: str = NonEmpty
    name: str = NonEmpty
    role: str = NonEmpty
    author_bio: tuple[str, ...] = Field(min_length=1)
    author_image: str = NonEmpty
    image_alt: str = NonEmpty
    amazon_url: HttpUrl
    image_width: int = 400
    image_height: int = 400


class SocialLink(_Content):
    name: str = NonEmpty
    url: HttpUrl


class NavItem(_Content):
    label: str = NonEmpty
    route: str = NonEmpty


# --- Site constants ---------------------------------------------------------------

BRAND_NAME = "Animals We Confuse"
TAGLINE = "Animals We Confuse!"
SITE_DESCRIPTION = (
    "Illustrated books, coloring books and puzzle books about the look-alike "
    "animals people mix up, starting with the guinea pig and the hamster."
)
LOGO_IMAGE = "/logo.svg"
SHARE_IMAGE = "/images/og-default.png"  # 1200x630 PNG, the default share image
SHARE_IMAGE_ALT = "The Animals We Confuse logo: a guinea pig and a hamster side by side"
SHARE_IMAGE_WIDTH = 1200
SHARE_IMAGE_HEIGHT = 630
AFFILIATE_NOTE = (
    "Some links on this site are affiliate links: if you buy through them, we may "
    "earn a small commission at no extra cost to you."
)

NAV_ITEMS: tuple[NavItem, ...] = (
    NavItem(label="Home", route="/"),
    NavItem(label="About", route="/about"),
    NavItem(label="Subscribe", route="/subscribe"),
    NavItem(label="Contact Us", route="/contact-us"),
)

SOCIAL_LINKS: tuple[SocialLink, ...] = (
    SocialLink(name="Facebook", url="https://www.facebook.com/animalsweconfuse"),
    SocialLink(name="Instagram", url="https://www.instagram.com/animalsweconfuse"),
    SocialLink(name="YouTube", url="https://www.youtube.com/@animalsweconfuse"),
    SocialLink(name="TikTok", url="https://www.tiktok.com/@animalsweconfuse"),
    SocialLink(name="X", url="https://x.com/animalsweconfuse"),
)

# --- Authors ------------------------------------------------------------------------

MAYA = Author(
    slug="maya-lindqvist",
    name="Maya Lindqvist",
    role="Author",
    author_bio=(
        "Maya Lindqvist has shared her home with guinea pigs since she was seven, "
        "and has been gently correcting people who call them hamsters for almost as "
        "long. After twenty years as a primary school teacher, she began writing the "
        "books she wished she could have read aloud to her class.",
        "Her stories mix careful research with a lot of giggling: every fact in "
        "Guinea Pig or Hamster? was checked with vets and small-animal rescuers, and "
        "every joke was tested on her nieces. She believes curiosity is the best "
        "pet anyone can keep.",
        "Maya lives by the sea with her husband, two guinea pigs called Pepper and "
        "Biscuit, and a growing list of animals that people keep confusing.",
    ),
    author_image="/images/authors/maya-lindqvist.svg",
    image_alt="Illustrated portrait of Maya Lindqvist, smiling, with glasses and auburn hair in a bun",
    amazon_url="https://www.amazon.com/author/mayalindqvist",
)

OLIVER = Author(
    slug="oliver-brandt",
    name="Oliver Brandt",
    role="Illustrator",
    author_bio=(
        "Oliver Brandt draws animals the way they really are: whiskers, wiggles and "
        "all. He studied scientific illustration before moving into picture books, "
        "and he still sketches from life, usually with a hamster asleep in his "
        "pocket.",
        "For this series he filled more than forty sketchbooks with guinea pigs and "
        "hamsters, so that young readers can spot the differences at a glance: the "
        "round ears, the missing tail, the stuffed cheek pouches. His line art in "
        "the coloring book leaves plenty of room for readers of every age to add "
        "their own colors.",
        "When he is not drawing, Oliver runs free sketching workshops at his local "
        "library and answers every letter a young artist sends him.",
    ),
    author_image="/images/authors/oliver-brandt.svg",
    image_alt="Illustrated portrait of Oliver Brandt with a short beard and dark curly hair, holding a pencil",
    amazon_url="https://www.amazon.com/author/oliverbrandt",
)

AUTHORS: tuple[Author, ...] = (MAYA, OLIVER)

# --- Books --------------------------------------------------------------------------

BOOKS: tuple[Book, ...] = (
    Book(
        slug="coloring-book",
        title="Guinea Pig or Hamster? The Coloring Book",
        subtitle="A Look-Alike Animals Coloring Book for Adults and Kids",
        caption="Coloring book for adults and kids",
        description=(
            "Forty-five full-page illustrations of guinea pigs and hamsters at home, "
            "in the garden and on grand adventures, printed on one side of the page "
            "so markers never bleed through. Simple scenes for little hands sit next "
            "to detailed patterns for grown-ups who color to unwind, and every page "
            "hides one clue that tells the two animals apart."
        ),
        book_link="https://www.amazon.com/s?k=Guinea+Pig+or+Hamster+The+Coloring+Book",
        cover_image="/images/covers/coloring-book.svg",
        image_alt=(
            "Cover of Guinea Pig or Hamster? The Coloring Book: line drawings of a "
            "guinea pig and a hamster waiting to be colored"
        ),
        author_names=(MAYA.name, OLIVER.name),
    ),
    Book(
        slug="guinea-pig-or-hamster",
        title="Guinea Pig or Hamster?",
        subtitle="An Illustrated Guide to Two Furry Friends People Confuse",
        caption="Illustrated picture book, ages 5 and up",
        description=(
            "They are both small, round and fluffy, so which is which? Follow Pip the "
            "guinea pig and Hazel the hamster through a busy week and discover why "
            "one has no tail, why the other stuffs its cheeks, who squeaks for "
            "breakfast and who stays up all night. A warm, funny and accurate first "
            "guide for young animal lovers and the grown-ups reading with them."
        ),
        book_link="https://www.amazon.com/s?k=Guinea+Pig+or+Hamster+illustrated+book",
        cover_image="/images/covers/guinea-pig-or-hamster.svg",
        image_alt=(
            "Cover of Guinea Pig or Hamster?: a round tailless guinea pig beside a "
            "smaller hamster with full cheek pouches on a grassy hill"
        ),
        author_names=(MAYA.name, OLIVER.name),
    ),
    Book(
        slug="word-search-book",
        title="Guinea Pig or Hamster? Word Search",
        subtitle="Puzzles Inspired by the Illustrated Book",
        caption="Word search puzzle book, ages 7 and up",
        description=(
            "Sixty large-print word search puzzles built from the words in Guinea "
            "Pig or Hamster?, from CAVY and BURROW to PELLETS and WHISKERS. Each "
            "puzzle comes with a fun fact about the two animals, and the answers are "
            "at the back for quick checking on car trips, rainy days and quiet "
            "evenings."
        ),
        book_link="https://www.amazon.com/s?k=Guinea+Pig+or+Hamster+Word+Search",
        cover_image="/images/covers/word-search-book.svg",
        image_alt=(
            "Cover of Guinea Pig or Hamster? Word Search: a letter grid with the "
            "words hamster, cavy, pellet and hay circled"
        ),
        author_names=(MAYA.name,),
    ),
)


def author_by_name(name: str) -> Author | None:
    """The author card for a name credited on a book, if we have one."""
    return next((author for author in AUTHORS if author.name == name), None)
