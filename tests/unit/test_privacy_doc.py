"""Every figure and promise of docs/privacy.md, written from the code's own values: a figure that moves
in the code, or a sentence edited away, fails here. What they promise is tested where it happens."""

from __future__ import annotations

import re
from pathlib import Path

from reflex.istate.manager.disk import StateManagerDisk
from reflex_base import config as reflex_config

from publisher import visits
from publisher.config import settings
from publisher.limits import tabs
from publisher.reflex_internals import stored_state
from publisher.rules import admin_access, list_rules, visit_rules, visitor_limits
from publisher.rules.visit_rules import counts_as_view
from publisher.server import admin_sign_in, middleware
from publisher.storage import tables, visit_counts
from publisher.visits import recorder

ROOT = Path(__file__).resolve().parents[2]


def mode(bits: int) -> str:
    return f"`{bits:04o}`"


def kept_figures() -> list[str]:
    """The figures and paths docs/privacy.md gives for what is kept of a visitor outside counting."""
    closed_minutes, rest = divmod(tabs.CLOSED_TAB_KEEP_S, 60)
    ceremony_minutes, left = divmod(int(admin_access.CEREMONY_VALID_FOR.total_seconds()), 60)
    assert (rest, left) == (0, 0)
    an_hour = 3600  # "an hour": Reflex's expiry of a tab's state, in memory, on disk and in Redis
    assert reflex_config.get_config().redis_token_expiration == an_hour == tabs.keep_s()
    assert StateManagerDisk.__dataclass_fields__["token_expiration"].default_factory() == an_hour  # type: ignore[misc]
    assert admin_sign_in.CEREMONY_SWEEP_S == 60  # "at most a minute after it ran out"
    assert "REFLEX_STATES_WORKDIR=/data/states" in (ROOT / "Dockerfile").read_text(encoding="utf-8")
    file_mode, folder_mode = mode(tables.PRIVATE_FILE_MODE), mode(stored_state.PRIVATE_FOLDER_MODE)
    assert mode(stored_state.PRIVATE_FILE_MODE) == file_mode
    return [
        "a file in `REFLEX_STATES_WORKDIR` (`/data/states` in the container)",
        f"until {closed_minutes} minutes after the page closed, or an hour after its last event once it sent its form",
        "the file until an hour after its last write",
        f"(for IPv6 its /{visitor_limits.IPV6_BLOCK_PREFIX}) in the database (table `admin_ceremony`)",
        f"or at most a minute after it ran out, {ceremony_minutes} minutes after it was asked",
        f"(mode {file_mode} from the moment it is made, whatever the umask), the states folder ({folder_mode}, its "
        f"files {file_mode}) and the secrets the site makes ({file_mode})",
    ]


def documented_figures() -> list[str]:
    """The phrases of docs/privacy.md that give a figure, each written from the code's own value."""
    counted = [status for status in range(100, 600) if counts_as_view("GET", status, "/", frozenset({"/"}), {})]
    assert counted == [200, 304]
    cdn_seconds = int(re.findall(r"s-maxage=(\d+)", middleware.STATIC_PAGE_CACHE)[0])
    limit = visit_rules.BUY_PER_ADDRESS
    hours = visit_rules.SALT_LIFETIME_HOURS
    return [
        *kept_figures(),  # first: they hold phrases of this list too ("/64")
        f"answered {counted[0]} or {counted[1]}",
        f"A label is cut to {visit_rules.LABEL_MAX} characters",
        f"at most {visit_rules.LABELS_PER_DAY} new sources and {visit_rules.LABELS_PER_DAY} new campaigns a day",
        f"at most {visit_rules.LABELS_PER_ADDRESS} new labels a day",
        f"at most {visit_rules.VIEWS_PER_ADDRESS} page views a day",
        f"by at most {visit_rules.VISITORS_PER_ADDRESS} user agents (its visitors)",
        f"so at most {5 * visit_rules.VIEWS_PER_ADDRESS:,} seen rows",
        f"longer than {visit_rules.USER_AGENT_MAX} characters",
        f"{recorder.ADDRESSES_PER_DAY:,} addresses a day",
        f"at most {visit_rules.BEACON_BODY_MAX} bytes",
        f"at most {limit.attempts} presses per address in {limit.window_s // 60} minutes",
        f"for IPv6 its /{visitor_limits.IPV6_BLOCK_PREFIX}",
        f"HMAC-SHA256 under the day's salt, cut to {visit_rules.VISITOR_ID_BYTES} bytes",
        f"(the last {visit_counts.VISITORS_NOW_MINUTES} minutes)",
        f"Both are destroyed {hours} hours after their day began** (the day's 00:00 UTC)",
        f"until {hours} hours after its day began",
        f"destroyed {hours} hours after its day began",
        f"What stays after {hours} hours",
        f"until {list_rules.WAITLIST_KEEP_DAYS} days after that book's email went out",
        f"or {list_rules.WAITLIST_KEEP_DAYS} days after it was given if never confirmed",
        f"within those {hours} hours",
        f"every {visits.FLUSH_INTERVAL_S} seconds, in one transaction",
        f"until its next flush, {visits.FLUSH_INTERVAL_S} seconds at most",
        f"Past {recorder.MAX_KEYS_PER_FLUSH:,} new keys of one kind in one flush",
        f"`PUBLISHER_VISITS_KEEP_DAYS` days, {settings.DEFAULT_VISITS_KEEP_DAYS} by default",
        f"while the worker runs; the last {visit_rules.BOT_CACHE_SIZE:,}",
        f"remembers the last {visit_rules.BOT_CACHE_SIZE:,} user agents",
        f"`s-maxage={cdn_seconds}`",
        f"answer a page for {cdn_seconds} seconds",
    ]


def test_every_figure_docs_privacy_gives_is_the_codes():
    """And no other figure is left in the doc: a new one there fails here too."""
    text = " ".join((ROOT / "docs" / "privacy.md").read_text(encoding="utf-8").split())
    missing = [phrase for phrase in documented_figures() if phrase not in text]
    assert missing == [], "docs/privacy.md no longer says these, with the code's figures"
    for phrase in documented_figures():
        text = text.replace(phrase, "")
    left = re.findall(r"\S*\d\S*", re.sub(r"IPv6|HMAC-SHA256", "", text))
    assert left == [], "docs/privacy.md gives figures no test reads from the code"


def test_the_waitlists_days_are_the_ones_docs_mailing_list_gives():
    text = " ".join((ROOT / "docs" / "mailing-list.md").read_text(encoding="utf-8").split())
    days = list_rules.WAITLIST_KEEP_DAYS
    assert f"{days} days after the last book it waits for was sent" in text
    assert f"never confirmed, {days} days after it asked" in text
