"""A simulated visitor speaking Reflex's websocket protocol (socket.io at /_event) as a browser does, for
the load benchmark and the tests that need many visitors or hand-crafted events."""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import Callable
from typing import Any

import aiohttp
import socketio

from publisher.rules import form_tokens
from publisher.rules.antispam import MathQuestion
from tests.support import FORM_SECRET

ROOT_STATE = "reflex___state____state"
SUBSCRIBE_STATE = f"{ROOT_STATE}.publisher___web___submissions____subscribe_state"
CONTACT_STATE = f"{ROOT_STATE}.publisher___web___submissions____contact_state"
ADMIN_STATE = f"{ROOT_STATE}.publisher___web___states___admin_state____admin_state"
HYDRATE = f"{ROOT_STATE}.hydrate_and_load"
VAR_SUFFIX = "_rx_state_"
NAMESPACE = "/_event"  # socket.io namespace (and engine.io path) of Reflex's event channel


class Visitor:
    """One browser tab on one page."""

    def __init__(
        self,
        base_url: str,
        path: str,
        token: str | None = None,
        source: str | None = None,
        cookie: str | None = None,
    ):
        """``source``: the loopback address it connects from; ``cookie``: its event channel's Cookie header."""
        self.cookie = cookie
        self.base_url = base_url
        self.path = path
        self.token = token or str(uuid.uuid4())
        self.state: dict[str, dict[str, Any]] = {}
        self.updates: list[dict[str, Any]] = []
        self._changed = asyncio.Event()
        self._http = aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=(source, 0))) if source else None
        self.sio = socketio.AsyncClient(reconnection=False, http_session=self._http)
        self.sio.on("event", self._on_update, namespace=NAMESPACE)
        # A server that goes away wakes anyone waiting, so they can see ``connected`` is False.
        self.sio.on("disconnect", lambda *_reason: self._changed.set(), namespace=NAMESPACE)

    async def _on_update(self, update: dict[str, Any]) -> None:
        self.updates.append(update)
        for substate, values in (update.get("delta") or {}).items():
            self.state.setdefault(substate, {}).update(
                {name.removesuffix(VAR_SUFFIX): value for name, value in values.items()}
            )
        for event in update.get("events") or []:
            # Events the page sends back (on_load, chained handlers); client-side ones start with an underscore.
            if not event.get("name", "").split(".")[-1].startswith("_"):
                await self.send(event["name"], event.get("payload") or {})
        self._changed.set()

    async def connect(self, timeout_s: float = 10) -> None:
        await self.sio.connect(
            f"{self.base_url}?token={self.token}",
            socketio_path="/_event",
            transports=["websocket"],
            namespaces=[NAMESPACE],
            wait_timeout=timeout_s,
            headers={"Cookie": self.cookie} if self.cookie else {},
        )

    async def send(self, name: str, payload: dict[str, Any], router_data: dict[str, Any] | None = None) -> None:
        """``router_data``: more of what the page says about itself (a crafted event's claims)."""
        router = {"pathname": self.path, "asPath": self.path, **(router_data or {})}
        await self.sio.emit("event", {"name": name, "payload": payload, "router_data": router}, namespace=NAMESPACE)

    async def open_page(self, ready: Callable[[Visitor], bool], timeout_s: float = 15) -> None:
        """Connect and hydrate, as a page load does; wait until ``ready`` holds."""
        await self.connect(timeout_s)
        await self.send(HYDRATE, {})
        await self.wait_for(ready, timeout_s)

    @property
    def connected(self) -> bool:
        return self.sio.connected

    def var(self, substate: str, name: str, default: Any = None) -> Any:
        return self.state.get(substate, {}).get(name, default)

    async def wait_for(self, condition: Callable[[Visitor], bool], timeout_s: float = 15) -> float:
        """Wait until ``condition`` holds on the received state; returns the seconds waited."""
        started = time.perf_counter()
        async with asyncio.timeout(timeout_s):
            while not condition(self):
                self._changed.clear()
                await self._changed.wait()
        return time.perf_counter() - started

    async def close(self) -> None:
        if self.sio.connected:
            await self.sio.disconnect()
        if self._http is not None:
            await self._http.close()


def hydrated(visitor: Visitor) -> bool:
    return visitor.var(ROOT_STATE, "is_hydrated") is True


def question_answer(text: str) -> int:
    """The answer to "What is X + Y?" / "What is X - Y?", as a person works it out."""
    left, operator, right = text.removeprefix("What is ").removesuffix("?").split(" ")
    return int(left) + int(right) if operator == "+" else int(left) - int(right)


# The question a token made here asks (form_token_shown_ago), and its answer.
TOKEN_QUESTION, TOKEN_ANSWER = MathQuestion(3, "+", 4), 7


def form_token_shown_ago() -> str:
    """A contact token as a test server writes it, for a form shown 10 s ago: past the fill time, without waiting."""
    shown = time.time() * 1000 - 10_000
    return form_tokens.issue(FORM_SECRET, TOKEN_QUESTION, now_ms=shown, shown_ms=shown)


_SERVED_QUESTION = re.compile(r'id="contact-question"[^>]*>([^<]*)<')
_SERVED_TOKEN = re.compile(r'<input[^>]*id="contact-token"[^>]*value="([^"]*)"')


def question_in_page(html: str) -> tuple[str, str]:
    """The question and its signed token the server wrote into a contact page (server/plain_forms.py)."""
    question, token = _SERVED_QUESTION.search(html), _SERVED_TOKEN.search(html)
    assert question is not None and token is not None, "the contact page carries no question"
    return question.group(1), token.group(1)


async def served_question(base_url: str) -> tuple[str, str]:
    """The contact page's question and token, as a page served now carries them."""
    async with aiohttp.ClientSession() as http, http.get(base_url + "/contact-us") as response:
        return question_in_page(await response.text())


def notice_changed(substate: str, before: str) -> Callable[[Visitor], bool]:
    """The form's toast changed: the submission reached an end (success or failure)."""
    return lambda v: v.var(substate, "notice_id", "") not in ("", before)


async def subscribe_over_websocket(
    base_url: str, email: str, visitor: Visitor | None = None, timeout_s: float = 20
) -> tuple[Visitor, float]:
    """Submit the signup form as its page does; the visitor (still connected) and the seconds until its toast."""
    if visitor is None:
        visitor = Visitor(base_url, "/subscribe")
        await visitor.open_page(hydrated)
    before = visitor.var(SUBSCRIBE_STATE, "notice_id", "")
    started = time.perf_counter()
    await visitor.send(f"{SUBSCRIBE_STATE}.submit", {"form_data": {"name": "Jo Reader", "email": email}})
    await visitor.wait_for(notice_changed(SUBSCRIBE_STATE, before), timeout_s=timeout_s)
    return visitor, time.perf_counter() - started


async def ask_here_answer_there(
    ask_url: str, answer_url: str, sender: dict[str, str], message: str, fill_time_s: float
) -> tuple[str, str]:
    """A contact question asked by one server, answered by the same tab through another; (status, form_error)."""
    asked = Visitor(ask_url, "/contact-us")
    await asked.open_page(hydrated)
    question, token = await served_question(ask_url)
    await asked.close()
    await asyncio.sleep(fill_time_s + 0.2)
    answered = Visitor(answer_url, "/contact-us", token=asked.token)
    await answered.connect()
    answer = str(question_answer(question))
    await answered.send(
        f"{CONTACT_STATE}.submit",
        {"form_data": {**sender, "message": message, "answer": answer, "website": "", "token": token}},
    )
    await answered.wait_for(lambda v: bool(v.var(CONTACT_STATE, "notice_id") or v.var(CONTACT_STATE, "form_error")))
    outcome = (answered.var(CONTACT_STATE, "status"), answered.var(CONTACT_STATE, "form_error", ""))
    await answered.close()
    return outcome


def run_async(coroutine):
    """Run ``coroutine`` in its own thread and event loop: Playwright's sync API keeps one running here."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
