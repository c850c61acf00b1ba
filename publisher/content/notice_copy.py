"""The words of the emails the site writes to the publisher."""

from __future__ import annotations

DASHBOARD_LINE = "\n\nThe dashboard: {dashboard}\n"

PAUSED_SUBJECT = "A release is paused: {titles}"
PAUSED_INTRO = "A release stopped sending and waits for you.\n\n"
PAUSED_RELEASE = (
    "{title}: {reason}\n  To resume it: publisher-gateway announce {slug} (it shows why it paused and asks first)."
)

OUTBOX_SUBJECT = "{count} email(s) of the site could not be sent for over an hour"
OUTBOX_BODY = (
    "{count} email(s) of the site's outbox have failed since {since} UTC.\n\n"
    "See why with `publisher-gateway outbox`, and send the failed ones again with "
    "`publisher-gateway outbox --retry` once the mail server takes them."
)

MAILBOX_SUBJECT = "The bounce mailbox could not be read for over an hour"
MAILBOX_BODY = (
    "The site has not read its bounce mailbox since {since} UTC: {error}.\n\n"
    "Bounces and complaints wait there until it can. `publisher-gateway bounces --check` tries now and says why."
)
NO_REASON = "no reason given"

SUMMARY_SUBJECT = "Your week on the list"
SUMMARY_BODY = (
    "The seven days before today:\n\n"
    "  New readers (confirmed): {new_readers}\n"
    "  Readers who left:        {leavers}\n"
    "  Bounces:                 {bounces}\n"
    "  Complaints:              {complaints}\n"
    "  Contact messages:        {messages}\n"
    "  Release emails sent:     {releases_sent}\n\n"
    "{visits}"
)
SUMMARY_VISITS = (
    "Visits to the site, counted on its own server:\n\n"
    "  Visitors:                {visitors}\n"
    "  Page views:              {views}\n"
    "  Top sources (visitors):  {sources}\n"
    "  Buy button presses:      {presses}\n"
    "{buy_lines}"
)
SUMMARY_NEXT_RELEASE = "\n\nNext release: {release}"
SUMMARY_SOURCE = "{source} {visitors}"
SUMMARY_BUY_LINE = "    {title} at {store}: {presses}\n"
SUMMARY_NONE = "none"
SUMMARY_VISITS_OFF = "Visits to the site: not counted (PUBLISHER_VISITS=off)."
SUMMARY_OFF = "(PUBLISHER_SUMMARY=off stops this weekly email.)\n"
