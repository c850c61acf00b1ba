"""What each page says: its heading and introduction, and its title, description and
keywords for search engines and link previews."""

from __future__ import annotations

import dataclasses

from publisher.content.form_copy import REPLY_TIME
from publisher.content.list_copy import CONFIRM_CHECKING, LIST_NAME
from publisher.content.models import PageCopy
from publisher.content.site import BRAND_NAME

HOME = PageCopy(
    title=f"{BRAND_NAME}: Books About Look-Alike Animals",
    description=(
        "Picture books, coloring books and word search puzzles about the animals "
        "people confuse, starting with Guinea Pig or Hamster? Get your copy today."
    ),
    keywords=(
        "guinea pig or hamster",
        "children's books",
        "look-alike animals",
        "coloring book for adults and kids",
        "word search book",
        "animal picture book",
    ),
    heading="Books about the animals we confuse",
    intro=(
        "Is it a guinea pig or a hamster? A crocodile or an alligator? Our picture "
        "books, coloring books and puzzle books help curious readers of every age "
        "tell look-alike animals apart, one giggle at a time."
    ),
    short_name="Home",
)

ABOUT = PageCopy(
    title="About the Authors",
    description=(
        "Meet author Maya Lindqvist and illustrator Oliver Brandt, the team behind "
        f"Guinea Pig or Hamster? and the {BRAND_NAME} books."
    ),
    keywords=("Maya Lindqvist", "Oliver Brandt", "children's book author", "illustrator"),
    heading="About the Authors",
    intro=(
        f"{BRAND_NAME} is a small independent publisher run by a writer and an "
        "illustrator who love the animals people mix up. Meet the people behind the books."
    ),
    short_name="About",
)

SUBSCRIBE = PageCopy(
    title="Subscribe to New Releases",
    description=(f"Join the {BRAND_NAME} email list and be the first to hear about new books in the series."),
    keywords=("new book releases", "email newsletter", "children's book series"),
    heading="Join Our Email List",
    intro=(
        f"Be the first to know when a new book in the {BRAND_NAME} series comes "
        "out. We write only when there is something new to share, and you can leave "
        "the list at any time."
    ),
    short_name="Subscribe",
)

CONTACT = PageCopy(
    title="Contact Us",
    description=(
        f"Questions about our books, school visits or bulk orders? Send the {BRAND_NAME} "
        f"team a message; we usually reply within {REPLY_TIME} on business days."
    ),
    keywords=("contact publisher", "school visits", "bulk book orders"),
    heading="Contact Us",
    intro=(
        "Questions about our books, a school or library visit, or a bulk order? "
        "Send us a message and we will get back to you, usually within "
        f"{REPLY_TIME} on business days."
    ),
    short_name="Contact Us",
)

# Where each form's plain POST leads after a success: the form page's heading and intro.
SUBSCRIBE_SENT = dataclasses.replace(
    SUBSCRIBE, title="Thank You for Subscribing", description=f"You joined the {BRAND_NAME} email list."
)
CONTACT_SENT = dataclasses.replace(
    CONTACT, title="Message Sent", description=f"Your message reached the {BRAND_NAME} team."
)

CONFIRM = PageCopy(
    title="Confirm Your Subscription",
    description=f"Confirm your address for {LIST_NAME}.",
    keywords=("confirm subscription",),
    heading="Confirm your subscription",
    intro=CONFIRM_CHECKING,
    short_name="Confirm your subscription",
)

UNSUBSCRIBE = PageCopy(
    title="Unsubscribe",
    description=f"Leave {LIST_NAME}.",
    keywords=("unsubscribe",),
    heading="Unsubscribe",
    intro=CONFIRM_CHECKING,
    short_name="Unsubscribe",
)

NOT_FOUND = PageCopy(
    title="Page Not Found",
    description="The page you were looking for could not be found.",
    keywords=("page not found",),
    heading="Oops! Page Not Found",
    intro=(
        "We looked under every hay pile and in every burrow, but this page is not "
        "here. It may have moved, or the link may be mistyped."
    ),
    short_name="Page Not Found",
)
NOT_FOUND_CODE = "404"
GO_HOME = "Go Home"
GO_BACK = "Go Back"
TIPS_HEADING = "Here are some tips:"
TIPS = (
    "Check the URL for typos.",
    "Use the navigation menu to find what you need.",
    "Visit the homepage to see our latest books.",
)
