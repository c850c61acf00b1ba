"""The books: their cards on Home, and the words of the book list and its search."""

from __future__ import annotations

from datetime import date

from publisher.content.authors import MAYA, OLIVER
from publisher.content.models import Book, PageCopy

LATEST_RELEASES = "Latest Releases"
GET_YOUR_COPY = "Get Your Copy Today"
# A book's page.
BY = "By"
DETAILS = "Book details"
FORMAT = "Format"
ISBN13 = "ISBN-13"
PAGES = "Pages"
AGES = "Ages"
PUBLISHED = "Published"
LANGUAGE = "Language"
BREADCRUMB_LABEL = "Breadcrumb"
COVER_ALT_PREFIX = "Cover of "  # the share image's alt text: "Cover of <title>"
# The release feed (/releases.atom), the way to follow new books without an email address.
AND = " and "
LIST_SEPARATOR = ", "
DATE_FORMAT = "%-d %B %Y"  # 12 March 2026
FEED_TITLE = "Animals We Confuse: new releases"
FEED_SUBTITLE = "New books in the Animals We Confuse series, as they come out."
# When the book list last changed: the feed's date for a book without a publication date.
CATALOGUE_UPDATED = date(2026, 11, 23)
# The home page's search (/?q=term); {query}, {count} and {total} are filled in by assets/site.js.
SEARCH_NO_MATCH = "No books match “{query}”."
SEARCH_MATCH = "Showing {count} of {total} books matching “{query}”."
SEARCH_SHOW_ALL = "Show all books"
# A forthcoming book (docs/content.md): its release moment in its own zone, until it is out.
MOMENT = "{date} at {time} {abbr} ({zone})"  # 12 March 2027 at 09:00 GMT (Europe/London)
COMING = "Coming {moment}"
MOMENT_AND_UTC = "{local}, {utc} UTC"  # for the publisher (dashboard, publisher-gateway schedule)
PREORDER = "Pre-order"

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
        age_range="5 and up",
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
        age_range="7 and up",
    ),
)


def latest_first(books: tuple[Book, ...]) -> tuple[Book, ...]:
    """Newest first where publication dates are given; the others after them, in the content's order."""
    # `or date.min` only for the type checker: the undated are filtered out.
    dated = sorted((b for b in books if b.publication_date), key=lambda b: b.publication_date or date.min, reverse=True)
    return (*dated, *(b for b in books if not b.publication_date))


def book_by_slug(slug: str) -> Book | None:
    return next((book for book in BOOKS if book.slug == slug), None)


SNIPPET_MAX = 160  # what search results show of a description


def book_page_copy(book: Book) -> PageCopy:
    """What a book's page says of itself: its title, and for search results the start of its description."""
    return PageCopy(
        title=book.title,
        description=_snippet(book.description),
        keywords=(book.title, book.caption, *book.author_names, "look-alike animals"),
        heading=book.title,
        intro=book.subtitle,
        short_name=book.title,
    )


def _snippet(text: str) -> str:
    """The first sentence when it fits, else as many whole words as fit, with an ellipsis."""
    first = text.split(". ")[0].rstrip(".") + "."
    if len(first) <= SNIPPET_MAX:
        return first
    return text[: SNIPPET_MAX - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def joined(names: list[str]) -> list[str]:
    """The separators between names as the page writes them: 'A', 'A and B', 'A, B and C'."""
    return [LIST_SEPARATOR] * max(len(names) - 2, 0) + ([AND] if len(names) > 1 else [])
