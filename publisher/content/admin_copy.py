"""Every sentence of the publisher's dashboard (/admin) and its sign-in: never indexed, never in the
sitemap, its words for the publisher, not for visitors."""

from __future__ import annotations

from publisher.content.models import PageCopy

DASHBOARD_PAGE = PageCopy(
    title="Dashboard",
    description="The publisher's dashboard.",
    keywords=(),
    heading="Dashboard",
    intro="This dashboard is for the publisher. Sign in with the passkey you created from your invitation.",
    short_name="Dashboard",
)
ENROL_PAGE = PageCopy(
    title="Create a passkey",
    description="Create the passkey that opens the publisher's dashboard.",
    keywords=(),
    heading="Create a passkey",
    intro=(
        "You were invited to the publisher's dashboard. Create a passkey on this device: "
        "your fingerprint, face or screen lock will open the dashboard from now on."
    ),
    short_name="Create a passkey",
)

SIGN_IN_BUTTON = "Sign in with a passkey"
CREATE_PASSKEY_BUTTON = "Create a passkey"
SIGN_OUT_BUTTON = "Sign out"
SIGNED_IN_AS = "Signed in as {name}"
WORKING = "Waiting for your passkey…"

# What the sign-in endpoints answer, shown on the page as they are.
NO_PASSKEY_SUPPORT = "This browser cannot use passkeys. Open the link in a current browser on your phone or computer."
ENROLMENT_LINK_INVALID = (
    "This invitation link is not valid: it was used already, it expired (links last 24 hours), "
    "or it was copied incompletely. Ask for a new one (publisher-gateway admin invite NAME)."
)
PASSKEY_REFUSED = "That passkey was not accepted. Try again, or ask for a new invitation."
CEREMONY_EXPIRED = "That took too long. Try again."
CANCELLED = "No passkey was used. Try again when you are ready."
TOO_MANY_ATTEMPTS = "Too many failed attempts from this address. Wait a few minutes, then try again."
TOO_MANY_CEREMONIES = (
    "Too many sign-ins are waiting for a passkey from this address. Wait a few minutes, then try again."
)
SIGN_IN_BUSY = "Too many sign-ins are under way on this site right now. Wait a few minutes, then try again."
NOT_FROM_THIS_SITE = "This request did not come from the dashboard's own page."
TRY_AGAIN_LATER = "The dashboard cannot reach its database right now. Try again in a moment."

# The dashboard's parts, each under its heading.
READERS = "Readers"
LATEST_SIGNUPS = "Latest sign-ups"
SEARCH_LABEL = "Find a reader by the beginning of their address"
SEARCH_BUTTON = "Search"
NO_READER_FOUND = "No reader's address begins like that."
MESSAGES = "Messages"
RELEASES = "Releases"
BOUNCES = "Bounces"
LEFT_IN_MAILBOX = "Left in the bounce mailbox"
HEALTH = "Health"
NOTHING_YET = "Nothing yet."
PROGRESS = "{done} of {total}"  # a campaign's emails done of its recipients: "412 of 1,234"
SIGN_IN_FIRST = "Your session has ended. Sign in again to download."

# What the publisher can do: each asks first, with what it will do, and is written to the audit log.
FORGET_LABEL = "Forget an address: erase everything stored about it"
FORGET_BUTTON = "Forget…"
ASK_FORGET = (
    "Erase everything stored about {address}: its place on the list, its messages and its emails? "
    "This cannot be undone."
)
ASK_PAUSE = "Pause the release of {title}? {progress} sent; the rest waits until you resume it."
PAUSE_BUTTON = "Pause {title}"
CONFIRM_BUTTON = "Yes, do it"
CANCEL_BUTTON = "Cancel"
FORGOTTEN = "{address}: {what}"
PAUSED = "The release of {title} is paused. `publisher-gateway announce {slug}` resumes it."
NOT_PAUSED = "The release of {title} was not sending any more: nothing was paused."
PAUSED_REASON = "paused by {name} from the dashboard"
EXPORT_BUTTON = "Export the list as CSV"
AUDIT = "Audit log"
AUDIT_DOWNLOAD_BUTTON = "Download the audit log"
NOT_ANNOUNCED = "not announced"
ANNOUNCE_BUTTON = "Announce {title}"
RESUME_BUTTON = "Resume {title}"
ASK_ANNOUNCE = "Send {title} to {readers} readers?"
ASK_RESUME = "Resume the release of {title}? It paused: {reason}. {progress} sent so far."
NOBODY_CONFIRMED = "Nobody has confirmed a subscription yet: there is nobody to send {title} to."
ANNOUNCED = "The release of {title} is queued for {readers} readers: it is sending now."
ALREADY_ANNOUNCED = "{title} has been announced already: nothing more was queued."
RESUMED = "The release of {title} is sending again."
NOT_RESUMED = "The release of {title} was not paused any more: nothing changed."
CONFIRMED_CHART = "Confirmed readers per day, the last 90 days: {first} then, {last} now."
WEEKS_CHART = (
    "Sign-ups (green) against leavers (red) per week, the last 13 weeks: {joined} joined and {left} left in all."
)

# Visits (publisher/visits/, docs/dashboard.md): counted by the server, shown as aggregates.
VISITS = "Visits"
VISITS_CHART = (
    "Visitors (solid line) and page views (dashed) per day, the {days} days to {last}: {latest} visitors and "
    "{latest_views} page views on the last day, at most {top} visitors on one day; {views} page views in all."
)
VISITORS_NOW = "Visitors now (the last {minutes} minutes)"
VISITORS_TODAY = "Visitors today"
PAGE_VIEWS_TODAY = "Page views today"
VISITORS_YESTERDAY = "Visitors yesterday"
PAGE_VIEWS_YESTERDAY = "Page views yesterday"
BOTS_TODAY = "Bot requests today (counted apart)"
NOT_KNOWN = "-"  # a figure that could not be read now
TOP_PAGES = "Top pages, the last {days} days"
TOP_SOURCES = "Where visitors came from, the last {days} days"
TOP_CAMPAIGNS = "Campaigns (utm_ or ref in the link they followed), the last {days} days"
BUY_PRESSES = "Buy presses per book and store, the last {days} days"
BOOK_PAGES_TO_PRESSES = "Each book: visitors of its page and buy presses, the last {days} days"
LED_TO_CHART = (
    "Visitors of /subscribe (solid line) and sign-ups (dashed) per day, the {days} days to {last}: "
    "{subscribe} visitors of /subscribe, {signups} sign-ups, {confirmations} confirmations; "
    "{contact} visitors of /contact-us, {messages} messages."
)
NO_SCRIPT_NOTE = (
    "A press of a buy button is counted by the site's script, so presses by visitors without "
    "JavaScript are not counted (they still reach the store)."
)
VISITS_OFF = "Visits are not counted on this site: PUBLISHER_VISITS is off."
# Column headings of the Visits tables (a phone shows each beside its value); the first two, the chart's legend.
COLUMN_VISITORS = "Visitors"
COLUMN_PAGE_VIEWS = "Page views"
COLUMN_PAGE = "Page"
COLUMN_SOURCE = "Source"
COLUMN_CAMPAIGN = "Campaign"
COLUMN_ARRIVALS = "Arrivals"
COLUMN_BOOK = "Book"
COLUMN_STORE = "Store"
COLUMN_PRESSES = "Presses"
COLUMN_PRESSERS = "People pressing"
COLUMN_BOOK_PRESSES = "Presses (on Home and its page)"  # the beacon knows the book, not the page pressed on
COLUMN_PAGE_VISITS = "Visitors of its page"
LED_TO_LEGEND = ("Visitors of /subscribe", "Sign-ups")
SHOW_ALL = "Show all {count}"  # under a list's first rows: opens the rest

# Forthcoming books (docs/dashboard.md): their waitlists, and their send, moved or held until it starts.
FORTHCOMING = "Forthcoming"
WAITLIST_CHART = "Sign-ups to {title}'s waitlist per day, the last {days} days: {total} in all, {today} today."
FORTHCOMING_LINE = "Its email: {when} ({state}). Waiting for it: {confirmed} confirmed, {pending} pending."
NOT_SCHEDULED = "not scheduled yet"  # the site schedules a forthcoming book's send when it starts
MOVE_LABEL = "Move the send of {title} (a time in {zone})"
MOVE_BUTTON = "Move…"
HOLD_BUTTON = "Hold {title}"
UNHOLD_BUTTON = "Stop holding {title}"
ASK_MOVE = "Move the send of {title} to {when}?"
ASK_HOLD = "Hold the send of {title}? It will not start until you stop holding it."
ASK_UNHOLD = "Stop holding the send of {title}? It starts at its time, or at once if that has passed."
MOVED_SEND = "The send of {title} is moved to {when}."
HELD_SEND = "The send of {title} is held."
UNHELD_SEND = "The send of {title} is no longer held."
NOT_CHANGED = "The send of {title} has started already (or was never scheduled): nothing changed."
NOT_A_TIME = "{text!r} is not a time as YYYY-MM-DD HH:MM (in {zone})"
PAST_TIME = "{text} in {zone} has passed: give a time to come"
