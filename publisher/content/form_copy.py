"""Everything the forms say. The messages the product description quotes are kept word for word
(docs/product.md, Forms); tests compare them letter by letter."""

from __future__ import annotations

from publisher.content.site import BRAND_NAME

# The promise the contact form makes, and its page and search snippet repeat.
REPLY_TIME = "24-48 hours"

# --- Validation (word for word) -----------------------------------------------------

NAME_REQUIRED = "Please enter your name"
NAME_TOO_SHORT = "Name must be at least 2 characters"
EMAIL_REQUIRED = "Please enter your email"
EMAIL_INVALID = "Please enter a valid email address"
FIRST_NAME_REQUIRED = "Please enter your first name"
FIRST_NAME_TOO_SHORT = "First name must be at least 2 characters"
LAST_NAME_REQUIRED = "Please enter your last name"
LAST_NAME_TOO_SHORT = "Last name must be at least 2 characters"
MESSAGE_REQUIRED = "Please enter your message"
MESSAGE_TOO_SHORT = "Message must be at least 10 characters"


def too_long(field: str, maximum: int) -> str:
    return f"{field} must be at most {maximum} characters"


def no_line_breaks(field: str) -> str:
    return f"{field} must not contain line breaks or control characters"


MESSAGE_CONTROL_CHARS = "Message must not contain control characters"

# --- The security question and the anti-spam checks (word for word) ------------------

MATH_REQUIRED = "Please answer the math question"
MATH_INCORRECT = "Incorrect answer"
HONEYPOT_REJECTED = "Please try again."
TOO_FAST_REJECTED = "Please take your time to fill out the form completely."
MATH_REJECTED = "Incorrect answer to the math question. Please try again."


def math_question(left: int, operator: str, right: int) -> str:
    return f"What is {left} {operator} {right}?"


TOO_MANY_ATTEMPTS = "Too many attempts. Please wait a few minutes and try again."
# At the top of a form the server answered (a plain POST) with messages: each links to its field.
ERROR_SUMMARY_TITLE = "There is a problem"
# Before the page's title, on that answer (as screen readers announce the title first).
ERROR_TITLE_PREFIX = "Error: "

SUBSCRIBE_SUCCESS_TOAST = "Successfully subscribed to our email list!"
SUBSCRIBE_FAILURE_TOAST = "Failed to subscribe. Please try again."
SUBSCRIBE_SUCCESS_TITLE = "Thank you for joining our email list!"
SUBSCRIBE_SUCCESS_TEXT = f"You will be the first to know when a new book in the {BRAND_NAME} series is released."
SUBSCRIBE_AGAIN = "Subscribe another address"
SUBSCRIBE_BUTTON = "Subscribe"
SUBSCRIBE_BUSY = "Subscribing..."
SUBSCRIBE_FORM_LABEL = "Join the email list"
SUBSCRIBE_SECTION_LABEL = "Email signup"
NAME_LABEL = "Name"
EMAIL_LABEL = "Email"

# --- Tell me when it's out (a forthcoming book's page) ---------------------------------

WAITLIST_TITLE = "Tell me when it's out"
WAITLIST_PROMISE = (
    "Leave your address and we will send you one email when {title} is out. We keep it for this book "
    "alone and erase it {days} days after that email, unless you also join the new-release list."
)
JOIN_LIST_LABEL = "Also join the new-release list: one email whenever a new book is out"
WAITLIST_BUTTON = "Tell me"
WAITLIST_THANKS_TITLE = "Thank you!"
# The same words whether the address was new, waiting or on the list: the form never says who is.
WAITLIST_THANKS_TEXT = (
    "If this address is new to us, please confirm it with the link we have just emailed you: "
    "until then we will not write to you again."
)
WAITLIST_AGAIN = "Sign up another address"

CONTACT_SUCCESS_TOAST = "Your message has been sent successfully!"
CONTACT_FAILURE_TOAST = "Failed to send message. Please try again."


def full_name(first_name: str, last_name: str) -> str:
    return f"{first_name} {last_name}"


def contact_subject(full_name: str) -> str:
    """The subject of the publisher's email about a contact message, whichever gateway sends it."""
    return f"Contact Form Submission from {full_name}"


CONTACT_SUCCESS_TITLE = "Thank you for contacting us!"
CONTACT_SUCCESS_TEXT = f"We have received your message. We typically reply within {REPLY_TIME} during business days."
CONTACT_AGAIN = "Send another message"
CONTACT_BUTTON = "Send Message"
CONTACT_BUSY = "Sending..."
CONTACT_FORM_LABEL = "Send us a message"
CONTACT_SECTION_LABEL = "Contact form"
FIRST_NAME_LABEL = "First name"
LAST_NAME_LABEL = "Last name"
MESSAGE_LABEL = "Message"
SECURITY_QUESTION_LABEL = "Security question: "
# Stands in the page for the question until the server writes one in (every page it serves)
# or the app asks one (the development server): never seen on the site itself.
QUESTION_PENDING = "…"
HONEYPOT_LABEL = "Leave this field empty"  # never seen by people; bots read it
