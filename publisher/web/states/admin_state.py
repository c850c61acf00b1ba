"""**Every** event checks the session cookie of its own connection in the database before anything is read, so
a state event sent by hand gets nothing; what the page shows is ``tab_only``, never stored (docs/security.md)."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Iterable
from dataclasses import asdict
from datetime import UTC, date, datetime, timedelta
from typing import Any

import reflex as rx
import sqlalchemy

from publisher import visits
from publisher.config import settings
from publisher.content import admin_copy, books
from publisher.content.books import book_by_slug
from publisher.limits import tabs
from publisher.mail import announce
from publisher.reflex_internals import stored_state
from publisher.rules import admin_access, form_fields, release_rules
from publisher.rules.list_rules import ListStatus
from publisher.rules.visit_rules import VisitKind
from publisher.storage import (
    admins,
    bounce_records,
    campaigns,
    dashboard,
    notice_records,
    subscribers,
    tables,
    visit_counts,
)
from publisher.web import charts

logger = logging.getLogger(__name__)

REFRESH_MS = 2000  # how often an open dashboard refreshes, and notices its session ended
ASKED = "dashboard: asked"  # its entry in limits/tabs.py's tab_memory
# The actions, as the audit log names them.
FORGET, ANNOUNCE, PAUSE, RESUME = "forget", "announce", "pause", "resume"
HOLD, UNHOLD, MOVE = "hold", "unhold", "move"  # a forthcoming book's send, until it starts
# The question each asks first, with a row's title, reason and progress.
_QUESTIONS = {
    HOLD: admin_copy.ASK_HOLD,
    UNHOLD: admin_copy.ASK_UNHOLD,
    PAUSE: admin_copy.ASK_PAUSE,
    RESUME: admin_copy.ASK_RESUME,
}
MOVED_TO = "%Y-%m-%d %H:%M UTC"  # the time a move names in the audit log, after the slug
# The list's figures in the Readers part, in this order, each under its status ("Confirmed").
READER_STATUSES = (ListStatus.CONFIRMED, ListStatus.PENDING, ListStatus.UNSUBSCRIBED, ListStatus.BOUNCED)


def number(count: int) -> str:
    return f"{count:,}"


def when(moment: datetime | None) -> str:
    return "" if moment is None else f"{moment:%Y-%m-%d %H:%M} UTC"


def _labelled(*figures: tuple[str, str]) -> list[dict[str, str]]:
    return [{"label": label, "value": value} for label, value in figures]


def _rows(lines: Iterable[Any]) -> list[dict[str, str]]:
    """Storage's lines (rows or dataclasses) by field name, as the page shows them."""
    fields = (line._asdict() if isinstance(line, sqlalchemy.Row) else asdict(line) for line in lines)
    return [
        {name: when(value) if isinstance(value, datetime | None) else str(value) for name, value in line.items()}
        for line in fields
    ]


# What the dashboard offers for a release in each state (the button's label, the action).
_ACTIONS = {
    None: (admin_copy.ANNOUNCE_BUTTON, ANNOUNCE),
    tables.SENDING: (admin_copy.PAUSE_BUTTON, PAUSE),
    tables.PAUSED: (admin_copy.RESUME_BUTTON, RESUME),
}


def _releases() -> list[dict[str, str]]:
    """A book gone from the content shows its slug; a forthcoming book's send starts by itself, so no Announce."""
    now = tables.utc_now()
    by_book = {item.book_slug: item for item in campaigns.list_campaigns()}
    slugs = [book.slug for book in books.BOOKS] + [slug for slug in by_book if book_by_slug(slug) is None]
    rows = []
    for slug in slugs:
        book = book_by_slug(slug)
        title = book.title if book is not None else slug
        item = by_book.get(slug)
        label, action = _ACTIONS.get(None if item is None else item.status, ("", ""))
        if book is not None and not release_rules.is_out(book, now):
            label, action = "", ""
        row = {"slug": slug, "title": title, "action": action, "action_label": label.format(title=title)}
        row.update(dict.fromkeys(("progress", "hard", "soft", "complaints", "bounce_rate", "complaint_rate"), ""))
        row.update(state=admin_copy.NOT_ANNOUNCED if item is None else item.status, paused="")
        if item is not None and item.status not in tables.NOT_STARTED:  # a send under way, or done
            assert item.id is not None  # a stored row
            counts = campaigns.campaign_counts(item.id)
            returns = bounce_records.campaign_returns(item.id)
            done = counts[tables.SENT] + counts[tables.FAILED] + counts[tables.SKIPPED]
            row.update(
                progress=admin_copy.PROGRESS.format(done=number(done), total=number(item.recipients)),
                hard=number(returns.hard),
                soft=number(returns.soft),
                complaints=number(returns.complaints),
                bounce_rate=announce.rate(returns.hard, returns.sent),
                complaint_rate=announce.rate(returns.complaints, returns.sent),
                paused=(item.paused_reason or "") if item.status == tables.PAUSED else "",
            )
        rows.append(row)
    return rows


def _forthcoming() -> list[dict[str, str]]:
    today = tables.utc_now().date()
    rows = []
    for send in dashboard.scheduled_sends(tables.utc_now()):
        title, days = send.book.title, len(send.per_day)
        held = send.status == tables.HELD  # until it starts: Hold, or Stop holding ("": not scheduled yet)
        label, action = (admin_copy.UNHOLD_BUTTON, UNHOLD) if held else (admin_copy.HOLD_BUTTON, HOLD)
        rows.append(
            {
                "slug": send.book.slug,
                "title": title,
                "line": send.words,
                "src": charts.data_uri(charts.lines(today - timedelta(days=days - 1), send.per_day)),
                "alt": admin_copy.WAITLIST_CHART.format(
                    title=title, days=days, total=number(sum(send.per_day)), today=number(send.per_day[-1])
                ),
                "action": action if send.status else "",
                "action_label": label.format(title=title),
                "move_id": f"move-{send.book.slug}",
                "move_label": admin_copy.MOVE_LABEL.format(title=title, zone=send.zone),
            }
        )
    return rows


def _charts() -> list[dict[str, str]]:
    today = tables.utc_now().date()
    confirmed = dashboard.confirmed_per_day(today)
    weeks = dashboard.joined_and_left_per_week(today)
    return [
        {
            "src": charts.data_uri(charts.lines(today - timedelta(days=len(confirmed) - 1), confirmed)),
            "alt": admin_copy.CONFIRMED_CHART.format(first=number(confirmed[0]), last=number(confirmed[-1])),
        },
        {
            "src": charts.data_uri(charts.pairs(weeks, today - timedelta(days=7 * len(weeks) - 1))),
            "alt": admin_copy.WEEKS_CHART.format(
                joined=number(sum(j for j, _ in weeks)), left=number(sum(left for _, left in weeks))
            ),
        },
    ]


TOP_DAYS = 30  # the top pages, sources, campaigns and buy presses: over the last 30 days
LED_TO_DAYS = 14  # what the visits led to: a chart of the last 14 days
VISITS_LEGEND = (admin_copy.COLUMN_VISITORS, admin_copy.COLUMN_PAGE_VIEWS)


def _keys(rows: list[visit_counts.KeyCount]) -> list[dict[str, str]]:
    return [{"key": row.key, "views": number(row.views), "visitors": number(row.visitors)} for row in rows]


def _visitors_now() -> str:
    """A store that is away leaves the rest of the dashboard shown."""
    try:
        return number(visit_counts.visitors_now(tables.utc_now()))
    except Exception as exc:  # noqa: BLE001 - Redis or the database away: one figure unknown, not the page
        logger.warning("Dashboard: visitors now is unknown (%s)", type(exc).__name__)
        return admin_copy.NOT_KNOWN


def _presses(since: date, today: date) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """Per book, presses from Home and its page alike: the beacon knows no page, so no rate of one by the other."""
    buys = visit_counts.top(VisitKind.BUY, since, today, limit=dashboard.LISTED)
    buy_rows = []
    for row in buys:
        slug, _, store = row.key.partition(" ")
        book = book_by_slug(slug)
        title = book.title if book is not None else slug
        buy_rows.append({"book": title, "store": store, "presses": number(row.views), "people": number(row.visitors)})
    pages = {book.slug: book.page_path for book in books.BOOKS}
    book_rows = [
        {
            "book": book.title,
            "visits": number(funnel.page_visitors),
            "presses": number(funnel.presses),
            "people": number(funnel.people_pressing),
        }
        for book, funnel in zip(books.BOOKS, visit_counts.book_funnels(pages, buys, since, today), strict=True)
    ]
    return buy_rows, book_rows


def _led_to(today: date) -> dict[str, str]:
    first = today - timedelta(days=LED_TO_DAYS - 1)
    subscribe = [
        day.visitors for day in visit_counts.daily(VisitKind.PAGE, first, today, key=form_fields.SUBSCRIBE.route)
    ]
    contact = visit_counts.daily(VisitKind.PAGE, first, today, key=form_fields.CONTACT.route)
    days = dashboard.list_days(today, LED_TO_DAYS)
    signups = [day.signups for day in days]
    return {
        "src": charts.data_uri(charts.lines(first, subscribe, signups, legend=admin_copy.LED_TO_LEGEND)),
        "alt": admin_copy.LED_TO_CHART.format(
            days=LED_TO_DAYS,
            last=today.isoformat(),
            subscribe=number(sum(subscribe)),
            signups=number(sum(signups)),
            confirmations=number(sum(day.confirmations for day in days)),
            contact=number(sum(day.visitors for day in contact)),
            messages=number(sum(day.messages for day in days)),
        ),
    }


def _visits() -> dict[str, list[dict[str, str]]]:
    """Aggregates of the daily counts: a fixed number of reads whatever the traffic."""
    if not settings.current().visits_on:  # the page shows the note alone, and reads no other visits_ part
        return {"visits_off": [{"text": admin_copy.VISITS_OFF}]}
    today = tables.utc_now().date()
    chart_first = today - timedelta(days=visits.CHART_DAYS - 1)
    since = today - timedelta(days=TOP_DAYS - 1)
    site = visit_counts.daily(VisitKind.SITE, chart_first, today)
    people, views = [day.visitors for day in site], [day.views for day in site]
    bots = visit_counts.daily(VisitKind.BOT, today, today)
    figures = [
        (admin_copy.VISITORS_NOW.format(minutes=visit_counts.VISITORS_NOW_MINUTES), _visitors_now()),
        (admin_copy.VISITORS_TODAY, number(people[-1])),
        (admin_copy.PAGE_VIEWS_TODAY, number(views[-1])),
        (admin_copy.VISITORS_YESTERDAY, number(people[-2])),
        (admin_copy.PAGE_VIEWS_YESTERDAY, number(views[-2])),
        (admin_copy.BOTS_TODAY, number(sum(day.views for day in bots))),
    ]
    chart = {
        "src": charts.data_uri(charts.lines(chart_first, people, views, legend=VISITS_LEGEND)),
        "alt": admin_copy.VISITS_CHART.format(
            days=visits.CHART_DAYS,
            last=today.isoformat(),
            latest=number(people[-1]),
            latest_views=number(views[-1]),
            top=number(max(people)),
            views=number(sum(views)),
        ),
    }
    buy_rows, books = _presses(since, today)
    return {
        "visits_figures": _labelled(*figures),
        "visits_chart": [chart, _led_to(today)],
        "visits_pages": _keys(visit_counts.top(VisitKind.PAGE, since, today)),
        "visits_sources": _keys(visit_counts.top(VisitKind.SOURCE, since, today)),
        "visits_campaigns": _keys(visit_counts.top(VisitKind.CAMPAIGN, since, today)),
        "visits_buys": buy_rows,
        "visits_books": books,
    }


def _health(outbox: sqlalchemy.Row, mailbox: notice_records.RunStatus) -> list[dict[str, str]]:
    values = settings.current()
    configured = {True: "configured", False: "not configured"}
    return _labelled(
        ("Emails waiting", number(outbox.waiting)),
        ("Emails failed", number(outbox.failing)),
        ("Oldest waiting since", when(outbox.oldest_waiting_since) or "-"),
        ("SMTP", configured[values.mail is not None]),
        ("Bounce mailbox", configured[values.bounce_mailbox is not None]),
        ("Bounce mailbox last read", when(mailbox.last_success_at) or "-"),
        ("Bounce mailbox last error", mailbox.last_error or "-"),
    )


def _figures() -> dict[str, list[dict[str, str]]]:
    """Read in one go (off the event loop), each part bounded."""
    counts = subscribers.status_counts()
    left, _ = bounce_records.left_messages(limit=dashboard.LISTED)
    return {
        "readers": _labelled(*((status.capitalize(), number(counts.get(status, 0))) for status in READER_STATUSES)),
        "signups": _rows(dashboard.latest_signups()),
        "messages": _rows(dashboard.latest_messages()),
        "releases": _releases(),
        "forthcoming": _forthcoming(),
        "bounces": _rows(bounce_records.list_bounces(limit=dashboard.LISTED)),
        "left": [
            {"date": when(m.seen_at), "sender": m.sender, "subject": m.subject, "why": m.note or m.outcome}
            for m in left
        ],
        "charts": _charts(),
        **_visits(),
        "health": _health(dashboard.outbox_health(), notice_records.run_status(notice_records.BOUNCE_MAILBOX)),
        "audit": _rows(admins.audit_log(limit=dashboard.LISTED)),
    }


def _release_action(action: str, target: str, admin_name: str) -> str:
    """With the command line's own functions. A move's target: "SLUG 2027-03-12 09:00 UTC"."""
    slug, _, moved_to = target.partition(" ")
    book = book_by_slug(slug)
    title = book.title if book is not None else slug
    if action in (HOLD, UNHOLD, MOVE):
        moment = datetime.strptime(moved_to, MOVED_TO).replace(tzinfo=UTC) if action == MOVE else None
        return announce.steer(slug, moment, held=action == HOLD)[1]
    if action == ANNOUNCE:
        mail = announce.required_settings()
        created = announce.start_campaign(mail, announce.find_book(slug))
        if created is None:
            return admin_copy.ALREADY_ANNOUNCED.format(title=title)
        return admin_copy.ANNOUNCED.format(title=title, readers=number(created.recipients))
    if action == RESUME:
        return (admin_copy.RESUMED if announce.resume(slug) else admin_copy.NOT_RESUMED).format(title=title)
    paused = announce.pause(slug, admin_copy.PAUSED_REASON.format(name=admin_name))
    return (admin_copy.PAUSED if paused else admin_copy.NOT_PAUSED).format(title=title, slug=slug)


# What the page shows: never stored, and emptied when the session ends. ``parts``: ``_figures()``.
SHOWN = ("admin_name", "parts", "found", "searched", "question", "notice")


@stored_state.tab_only(*SHOWN)
class AdminState(rx.State):
    signed_in: rx.Field[bool] = rx.field(False)
    checked: rx.Field[bool] = rx.field(False)  # asked the server yet: until then, neither part is shown
    admin_name: rx.Field[str] = rx.field("")
    parts: rx.Field[dict[str, list[dict[str, str]]]] = rx.field(default_factory=dict)
    found: rx.Field[list[dict[str, str]]] = rx.field(default_factory=list)
    searched: rx.Field[bool] = rx.field(False)
    question: rx.Field[str] = rx.field("")  # an action asked for, waiting for its "Yes"
    notice: rx.Field[str] = rx.field("")  # what the last action did
    problem: rx.Field[str] = rx.field("")
    _watcher: str = ""  # the ``watch`` loop that refreshes this tab (one at a time)

    def _session_hash(self) -> str | None:
        """The cookie this event's channel opened with (never the stored copy); its door wrote the scheme."""
        https = self.router.headers.raw_headers.get(admin_access.CHANNEL_SCHEME_HEADER) == "https"
        token = admin_access.session_token(self.router.headers.cookie, https)
        return None if token is None else admin_access.token_hash(token)

    async def _admin(self, touch: bool, session_hash: str | None = None) -> admins.AdminIdentity | None:
        """``session_hash``: the session a background loop read when it started (else this event's)."""
        if session_hash is None:
            session_hash = self._session_hash()
        if session_hash is None or not settings.current().dashboard_on:
            return None
        return await asyncio.to_thread(admins.session_admin, session_hash, settings.current().admin_idle, touch=touch)

    def _tab(self) -> str:
        return self.router.session.client_token

    def _take_asked(self) -> tuple[str, str]:
        kept = tabs.tab_memory.get().get(self._tab(), {})
        return kept.pop(ASKED, ("", ""))

    def _clear(self) -> None:
        self.signed_in = False
        for name in SHOWN:  # each back to its empty value: "", {}, [] or False
            setattr(self, name, getattr(self, name).__class__())  # the class of the value a proxy wraps
        self._take_asked()
        self.problem = ""

    async def _show(self, touch: bool, session_hash: str | None = None) -> bool:
        """Every event's check of the session, and the page refreshed; whether it is signed in."""
        try:
            admin = await self._admin(touch, session_hash)
            if admin is None:
                self._clear()
                return False
            figures = await asyncio.to_thread(_figures)
        except sqlalchemy.exc.SQLAlchemyError as exc:
            logger.warning("Dashboard: the database is unavailable (%s)", type(exc).__name__)
            self._clear()
            self.problem = admin_copy.TRY_AGAIN_LATER
            return False
        finally:
            self.checked = True
        self.signed_in = True
        self.problem = ""
        self.admin_name = admin_copy.SIGNED_IN_AS.format(name=admin.name)
        self.parts = figures
        return True

    @rx.event
    async def search(self, form_data: dict):
        text = str(form_data.get("query", ""))[: form_fields.EMAIL_MAX]
        if not await self._show(touch=True):
            return
        try:
            self.found = _rows(await asyncio.to_thread(dashboard.find_readers, text))
        except sqlalchemy.exc.SQLAlchemyError:
            self.problem = admin_copy.TRY_AGAIN_LATER
            return
        self.searched = bool(text.strip())

    async def _ask(self, action: str, target: str, question: str) -> None:
        tabs.tab_memory.get().setdefault(self._tab(), {})[ASKED] = (action, target)
        self.question = question
        self.notice = ""

    @rx.event
    async def ask_forget(self, form_data: dict):
        address = form_fields.one_line(str(form_data.get("address", "")), form_fields.EMAIL_MAX).strip()
        if await self._show(touch=True) and address:
            await self._ask(FORGET, address, admin_copy.ASK_FORGET.format(address=address))

    @rx.event
    async def ask_release(self, slug: str):
        signed_in = await self._show(touch=True)
        rows = (*self.parts.get("forthcoming", []), *self.parts.get("releases", []))
        row = next((row for row in rows if row["slug"] == slug and row["action"]), None)
        if not signed_in or row is None:
            return
        title, action = row["title"], row["action"]
        if action != ANNOUNCE:
            words = {"title": title, "reason": row.get("paused", ""), "progress": row.get("progress", "")}
            await self._ask(action, slug, _QUESTIONS[action].format(**words))
            return
        try:
            announce.required_settings()
            readers = await asyncio.to_thread(campaigns.confirmed_count)
        except announce.Refused as refused:
            self.notice = str(refused)
            return
        if readers == 0:
            self.notice = admin_copy.NOBODY_CONFIRMED.format(title=title)
            return
        await self._ask(ANNOUNCE, slug, admin_copy.ASK_ANNOUNCE.format(title=title, readers=number(readers)))

    @rx.event
    async def ask_move(self, form_data: dict):
        book = book_by_slug(str(form_data.get("slug", "")))
        if not await self._show(touch=True) or book is None or book.release is None:
            return
        try:
            moment = release_rules.send_moment(str(form_data.get("at", ""))[:40], book.release.zone, tables.utc_now())
        except ValueError as refused:
            self.notice = str(refused)
            return
        when = release_rules.publisher_words(moment, book.release.zone)
        target = f"{book.slug} {moment:{MOVED_TO}}"
        await self._ask(MOVE, target, admin_copy.ASK_MOVE.format(title=book.title, when=when))

    @rx.event
    def cancel(self):
        self._take_asked()
        self.question = ""

    @rx.event
    async def confirm(self):
        """By the admin whose session is open now, not the one who asked."""
        action, target = self._take_asked()
        self.question = ""
        try:
            admin = await self._admin(touch=True)
            if admin is None:
                self._clear()
                return
            if not action:  # nothing asked in this tab (or asked before it reconnected elsewhere)
                await self._show(touch=False)
                return
            if action == FORGET:
                erased = await asyncio.to_thread(subscribers.forget, target)
                self.notice = admin_copy.FORGOTTEN.format(address=target, what=erased)
            else:
                self.notice = await asyncio.to_thread(_release_action, action, target, admin.name)
            await asyncio.to_thread(admins.audit, admin.name, action, target)
        except announce.Refused as refused:
            self.notice = str(refused)
            return
        except sqlalchemy.exc.SQLAlchemyError as exc:
            logger.warning("Dashboard: the database is unavailable (%s)", type(exc).__name__)
            self.problem = admin_copy.TRY_AGAIN_LATER
            return
        await self._show(touch=False)

    @rx.event
    async def open(self):
        if await self._show(touch=True):
            return AdminState.watch

    @rx.event(background=True)
    async def watch(self):
        """Fresh figures every ``REFRESH_MS`` (not the admin doing something, or an open page would never idle
        out), under the session of the event that started it: the stored state has no cookie."""
        token = self.router.session.client_token
        session_hash = self._session_hash()
        if session_hash is None:
            return  # opened without a session: nothing to refresh
        gate = tabs.shared_gate.get()
        me = uuid.uuid4().hex
        async with self:
            self._watcher = me
        while True:
            await asyncio.sleep(REFRESH_MS / 1000)
            async with self:
                if self._watcher != me:
                    return  # a newer load of the page watches now
                if not gate.token_open(token):  # the tab closed: nothing of it stays in memory either
                    self._watcher = ""
                    self._clear()
                    return
                if not await self._show(touch=False, session_hash=session_hash):
                    self._watcher = ""
                    return
