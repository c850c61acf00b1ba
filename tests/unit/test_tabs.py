"""The event channel's limits (limits/tabs.py) with an injected clock (each store: tests/services/test_tabs.py),
and what a closed tab leaves behind (reflex_internals/state_managers.py)."""

from __future__ import annotations

import asyncio
import logging
import time
from types import SimpleNamespace

import pytest
from limits.aio.storage import memory as limits_memory
from reflex.istate.manager.disk import StateManagerDisk
from reflex.istate.manager.memory import StateManagerMemory
from reflex.istate.manager.token import BaseStateToken
from reflex.state import State
from reflex_base import config as reflex_config

from publisher.config.settings import PerProcess
from publisher.limits import submits, tabs
from publisher.reflex_internals import state_managers
from publisher.rules import admin_access
from publisher.server import event_channel
from publisher.web.states import admin_state
from tests.unit.conftest import T0, Clock, http_scope

LIMITS = tabs.TabLimits(per_address=3, new_per_minute=5, per_worker=10)


@pytest.mark.asyncio
async def test_when_the_shared_counts_fail_tabs_are_let_in_and_the_workers_own_limits_still_hold():
    class Down(submits.MemoryStorage):
        async def incr(self, *args, **kwargs):
            raise ConnectionError("redis is down")

    door = tabs.TabGate(tabs.TabLimits(per_address=2, new_per_minute=1, per_worker=3), counts=Down())
    assert (await door.admit("198.51.100.50"))[0] is not None
    assert (await door.admit("198.51.100.50"))[0] is not None  # past the minute's 1: not counted, let in
    assert await door.admit("198.51.100.50") == (None, tabs.ADDRESS_FULL)
    assert (await door.admit("198.51.100.51"))[0] is not None
    assert await door.admit("198.51.100.52") == (None, tabs.WORKER_FULL)


@pytest.mark.asyncio
async def test_an_address_gets_its_open_tabs_and_new_tabs_a_minute_and_a_submitted_tab_is_remembered_its_time(
    monkeypatch,
):
    now = [T0]
    monkeypatch.setattr(limits_memory, "time", SimpleNamespace(time=lambda: now[0]))
    door = tabs.TabGate(tabs.TabLimits(per_address=3, new_per_minute=4, per_worker=10))
    opened = [(await door.admit("198.51.100.7"))[0] for _ in range(3)]
    assert await door.admit("198.51.100.7") == (None, tabs.ADDRESS_FULL)  # refused: not a new tab counted
    assert (await door.admit("198.51.100.8"))[0] is not None  # another address is served throughout
    await door.release(opened[0])
    assert (await door.admit("198.51.100.7"))[0] is not None
    await door.release(opened[1])
    assert await door.admit("198.51.100.7") == (None, tabs.TOO_FAST)  # a 5th new tab this minute
    assert await door.admit("198.51.100.7") == (None, tabs.TOO_FAST)
    await door.engage("token-1", 3600)  # a tab that submitted, remembered the time given
    now[0] += 60  # the next minute
    assert (await door.admit("198.51.100.7"))[0] is not None
    assert await door.engaged("token-1")
    now[0] += 3600
    assert not await door.engaged("token-1")


# --- The door in front of the event channel, as an ASGI server drives it (crafted clients). ---


class Channel:
    """A stand-in for socket.io's websocket handling: accept, read until the client is gone, then close."""

    def __init__(self):
        self.scopes: list[dict] = []
        self.received: list[dict] = []
        self.accepted = asyncio.Event()
        self.ended = asyncio.Event()

    async def __call__(self, scope, receive, send):
        self.scopes.append(scope)
        await receive()  # websocket.connect
        await send({"type": "websocket.accept"})
        self.accepted.set()
        while True:
            message = await receive()
            self.received.append(message)
            if message["type"] == "websocket.disconnect":
                break
        await send({"type": "websocket.close", "code": 1000})  # as engine.io does once its socket is gone
        self.ended.set()


class Client:
    """The browser's side of one websocket: what it sent (the upgrade) and what the server sent it."""

    def __init__(self):
        self.incoming: asyncio.Queue = asyncio.Queue()
        self.incoming.put_nowait({"type": "websocket.connect"})
        self.sent: list[dict] = []

    async def receive(self) -> dict:
        return await self.incoming.get()

    async def send(self, message: dict) -> None:
        self.sent.append(message)
        if message["type"] == "websocket.close":
            self.incoming.put_nowait({"type": "websocket.disconnect", "code": message.get("code", 1000)})

    def leave(self) -> None:
        self.incoming.put_nowait({"type": "websocket.disconnect", "code": 1001})


# A tab's client token: the key to its state, never logged (the fixture below checks every test here).
TOKEN = "4d7c1f0e-secret-client-token"


@pytest.fixture(autouse=True)
def no_token_logged(caplog):
    caplog.set_level(logging.DEBUG)
    yield
    assert TOKEN not in caplog.text


def ws_scope(client: str = "198.51.100.7", headers: dict | None = None) -> dict:
    query = f"EIO=4&transport=websocket&token={TOKEN}".encode()
    extensions = {"websocket.http.response": {}}
    return http_scope("/_event/", headers, client, type="websocket", query_string=query, extensions=extensions)


async def wait_for(condition, timeout_s: float = 5) -> None:
    async with asyncio.timeout(timeout_s):
        while not condition():
            await asyncio.sleep(0.005)


def door_for(gate_: tabs.TabGate, app=None, **kwargs) -> event_channel.EventChannelDoor:
    origins = kwargs.pop("origins", event_channel.ChannelOrigins(site_origin="https://books.example.com"))
    return event_channel.EventChannelDoor(app or Channel(), PerProcess(lambda: gate_), origins=origins, **kwargs)


def status_of(client: Client) -> int | None:
    starts = [m for m in client.sent if m["type"] == "websocket.http.response.start"]
    return starts[0]["status"] if starts else None


@pytest.mark.asyncio
async def test_a_tab_is_closed_after_its_lifetime_and_the_channel_behind_the_door_sees_it_go():
    limits = tabs.TabLimits(per_address=3, new_per_minute=5, per_worker=10, max_lifetime_s=0.05)
    the_gate, channel, client = tabs.TabGate(limits), Channel(), Client()
    door = door_for(the_gate, channel)
    await asyncio.wait_for(door(ws_scope(), client.receive, client.send), 5)  # the door closes it by itself
    closes = [m for m in client.sent if m["type"] == "websocket.close"]
    assert closes == [{"type": "websocket.close", "code": 1001}]  # once: the channel's own close is not sent on
    assert channel.received[-1]["type"] == "websocket.disconnect" and channel.ended.is_set()
    assert the_gate.open_here == {}  # its place is free; the page reconnects as a new tab


@pytest.mark.asyncio
async def test_concurrent_admits_never_take_more_than_the_workers_cap_and_a_refusal_gives_its_place_back():
    class Blocking:
        """Redis answering slowly; every worker together holds 192.0.2.2's most open tabs."""

        def __init__(self):
            self.release = asyncio.Event()
            self.waiting = 0

        async def open(self, address, tab, now, per_address):
            self.waiting += 1
            await self.release.wait()
            return address != "192.0.2.2"

    store = Blocking()
    limits = tabs.TabLimits(per_address=1, new_per_minute=100, per_worker=4)
    door = tabs.TabGate(limits, shared=store)  # type: ignore[arg-type]
    addresses = ["192.0.2.1", "192.0.2.1"] + [f"192.0.2.{n}" for n in range(2, 10)]
    admits = [asyncio.create_task(door.admit(address)) for address in addresses]
    await wait_for(lambda: store.waiting + sum(task.done() for task in admits) == len(admits))
    store.release.set()
    answers = await asyncio.gather(*admits)
    admitted = [tab for tab, _ in answers if tab is not None]
    # Four places reserved before the store answered (an address's second tab refused here); the store refused one.
    assert store.waiting == 4 and len(admitted) == 3
    assert sorted(why for _, why in answers if why) == sorted([tabs.ADDRESS_FULL] * 2 + [tabs.WORKER_FULL] * 5)
    assert len(door.open_here) == 3
    assert (await door.admit("192.0.2.50"))[0] is not None  # the refused tab's place came back


def test_near_its_cap_a_worker_refuses_an_address_holding_more_than_its_share_before_a_newcomer():
    # 34 addresses with 60 tabs each would fill a worker's 2,000: near the cap, they stop there.
    assert tabs.fair_refusal(held=60, open_here=1799, addresses_here=34, per_worker=2000) is None  # not near yet
    assert tabs.fair_refusal(held=60, open_here=1800, addresses_here=34, per_worker=2000) == tabs.MORE_THAN_SHARE
    assert tabs.fair_refusal(held=58, open_here=1950, addresses_here=34, per_worker=2000) is None  # within its share
    assert tabs.fair_refusal(held=0, open_here=1999, addresses_here=34, per_worker=2000) is None  # a newcomer
    assert tabs.fair_refusal(held=0, open_here=2000, addresses_here=34, per_worker=2000) == tabs.WORKER_FULL
    assert tabs.fair_refusal(held=1990, open_here=1990, addresses_here=1, per_worker=2000) is None  # one school
    # A small worker: nobody is held below the floor of a few tabs.
    assert tabs.fair_refusal(held=3, open_here=9, addresses_here=5, per_worker=10) is None
    assert tabs.fair_refusal(held=tabs.FAIR_FLOOR, open_here=9, addresses_here=5, per_worker=10) == (
        tabs.MORE_THAN_SHARE
    )


@pytest.mark.asyncio
async def test_a_worker_near_its_cap_still_lets_newcomers_in_and_stops_the_address_holding_most():
    door = tabs.TabGate(tabs.TabLimits(per_address=100, new_per_minute=100, per_worker=100))
    for _ in range(80):
        assert (await door.admit("203.0.113.1"))[0] is not None
    for _ in range(10):
        assert (await door.admit("203.0.113.2"))[0] is not None
    assert await door.admit("203.0.113.1") == (None, tabs.MORE_THAN_SHARE)  # 80 of 100, with 2 addresses here
    assert (await door.admit("203.0.113.2"))[0] is not None  # 10: within its share
    for n in range(9):
        assert (await door.admit(f"198.51.100.{n}"))[0] is not None  # newcomers, up to the hard cap
    assert await door.admit("198.51.100.99") == (None, tabs.WORKER_FULL)


@pytest.mark.asyncio
async def test_ipv6_tabs_are_counted_by_their_64_block_and_ipv4_mapped_as_ipv4_and_a_refusal_is_logged(caplog):
    the_gate, channel = tabs.TabGate(tabs.TabLimits(per_address=1, new_per_minute=5, per_worker=10)), Channel()
    door, clients = door_for(the_gate, channel), []
    for address, status in [
        ("2001:db8:1:2::1", None),
        ("2001:db8:1:2:ffff::3", 429),  # the same /64
        ("2001:db8:1:3::1", None),  # another /64
        ("203.0.113.9", None),
        ("::ffff:203.0.113.9", 429),  # IPv4-mapped: the same IPv4 address
    ]:
        client = Client()
        clients.append((client, asyncio.create_task(door(ws_scope(client=address), client.receive, client.send))))
        await wait_for(lambda c=client: c.sent)
        assert status_of(client) == status
    assert len(channel.scopes) == 3  # a refused tab never reaches Reflex: no state is made for it
    assert "Event channel refused" in caplog.text
    for client, task in clients:
        client.leave()
        await asyncio.wait_for(task, 5)


@pytest.mark.asyncio
async def test_a_websocket_from_another_sites_page_is_refused_403_and_not_counted():
    the_gate = tabs.TabGate(LIMITS)
    channel = Channel()
    door = door_for(the_gate, channel)
    foreign = Client()
    await door(ws_scope(headers={"Origin": "https://evil.example"}), foreign.receive, foreign.send)
    assert status_of(foreign) == 403 and channel.scopes == [] and the_gate.open_here == {}
    for origin in ("https://books.example.com", None):  # the site's own page; a client without an Origin
        client = Client()
        headers = {"Origin": origin} if origin else {}
        running = asyncio.create_task(door(ws_scope(headers=headers), client.receive, client.send))
        await wait_for(lambda: the_gate.open_here)
        assert not running.done()  # open, within its lifetime, until it leaves
        client.leave()
        await asyncio.wait_for(running, 5)
        assert [m["type"] for m in client.sent] == ["websocket.accept", "websocket.close"]
        assert the_gate.open_here == {}


def test_one_private_address_for_every_recent_tab_without_trusted_proxies_is_reported_hourly():
    clock = Clock()
    watch = event_channel.OneAddressWatch(clock=clock)
    assert [watch.seen("10.0.0.2", hops=0) for _ in range(20)] == [False] * 19 + [True]
    assert not any(watch.seen("10.0.0.2", hops=0) for _ in range(100))  # at most hourly
    clock.now += 1800
    assert not any(watch.seen("10.0.0.2", hops=0) for _ in range(30))
    clock.now += 1800
    assert watch.seen("10.0.0.2", hops=0)  # an hour later, the tabs of the last hour: still one address
    clock.now += 7200  # nothing seen for two hours: the earlier tabs no longer say anything
    assert not any(watch.seen("127.0.0.1", hops=0) for _ in range(19))
    assert watch.seen("127.0.0.1", hops=0)
    for address, hops in (("93.184.215.14", 0), ("10.0.0.2", 1)):  # a public address; a proxy hop is set
        quiet = event_channel.OneAddressWatch(clock=Clock())
        assert not any(quiet.seen(address, hops=hops) for _ in range(60))
    mixed = event_channel.OneAddressWatch(clock=Clock())
    assert not any(mixed.seen(f"10.0.0.{n % 2}", hops=0) for n in range(60))
    # The last 50 decide: one visitor among 49 proxied ones no longer hides the proxy once it is out of them.
    recent = event_channel.OneAddressWatch(clock=Clock())
    assert not recent.seen("198.51.100.1", hops=0)
    assert [recent.seen("10.0.0.2", hops=0) for _ in range(50)][-1]


@pytest.mark.asyncio
async def test_the_door_warns_once_when_every_tab_comes_from_one_private_address_and_no_proxy_is_trusted(
    caplog, monkeypatch
):
    caplog.set_level(logging.WARNING, logger="publisher.limits.tabs")
    monkeypatch.setattr(reflex_config.get_config(), "trusted_proxy_hops", 0)
    the_gate = tabs.TabGate(tabs.TabLimits(per_address=100, new_per_minute=100, per_worker=100))
    door = door_for(the_gate, watch=event_channel.OneAddressWatch(clock=Clock()))
    for _ in range(25):
        client = Client()
        client.leave()
        await door(ws_scope(client="172.18.0.3"), client.receive, client.send)
    warnings = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert warnings == ["the site sees every visitor as one address: set REFLEX_TRUSTED_PROXY_HOPS"]


def test_the_origins_come_from_the_deploy_url_and_in_development_from_the_development_servers_port(monkeypatch):
    config = reflex_config.get_config()
    monkeypatch.setattr(config, "deploy_url", "https://books.example.com")
    monkeypatch.setattr(config, "frontend_port", 3100)  # `reflex run --frontend-port 3100` sets it for its backend
    monkeypatch.setenv("PUBLISHER_DEV_HOST", "192.168.1.5")
    monkeypatch.setenv("REFLEX_ENV_MODE", "prod")
    assert event_channel.ChannelOrigins.configured() == event_channel.ChannelOrigins(
        site_origin="https://books.example.com"
    )
    monkeypatch.setenv("REFLEX_ENV_MODE", "dev")
    assert event_channel.ChannelOrigins.configured() == event_channel.ChannelOrigins(
        site_origin="https://books.example.com", dev_port=3100, dev_hosts=("192.168.1.5",)
    )
    monkeypatch.setattr(config, "frontend_port", None)  # Reflex's default port, when none was given
    monkeypatch.delenv("PUBLISHER_DEV_HOST")
    assert event_channel.ChannelOrigins.configured().dev_port == 3000


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("scheme", "hops", "headers", "seen"),
    [
        ("wss", 0, {}, "https"),
        ("ws", 0, {}, "http"),
        ("ws", 0, {"X-Publisher-Scheme": "https"}, "http"),  # the client's own claim is dropped
        ("ws", 0, {"X-Forwarded-Proto": "https"}, "http"),  # no proxy trusted: anyone could send it
        ("ws", 1, {"X-Forwarded-Proto": "https"}, "https"),  # behind the one trusted proxy
        ("wss", 0, {"X-Publisher-Scheme": "http"}, "https"),
    ],
)
async def test_the_door_tells_the_tabs_state_whether_its_connection_is_https_and_nothing_the_client_claims(
    monkeypatch, scheme, hops, headers, seen
):
    """The dashboard's state reads the session cookie by this header (rules/admin_access.session_token)."""
    monkeypatch.setattr(reflex_config.get_config(), "trusted_proxy_hops", hops)
    the_gate, channel, client = tabs.TabGate(LIMITS), Channel(), Client()
    running = asyncio.create_task(
        door_for(the_gate, channel)({**ws_scope(headers=headers), "scheme": scheme}, client.receive, client.send)
    )
    await asyncio.wait_for(channel.accepted.wait(), 5)
    client.leave()
    await asyncio.wait_for(running, 5)
    [scope] = channel.scopes
    written = [value for name, value in scope["headers"] if name == admin_access.CHANNEL_SCHEME_HEADER.encode()]
    assert written == [seen.encode()]


@pytest.mark.asyncio
async def test_in_memory_a_closed_tab_is_dropped_after_the_short_time_not_the_hour():
    manager = StateManagerMemory(token_expiration=3600)
    await manager.get_state(BaseStateToken(ident="idle-tab", cls=State))
    await manager.get_state(BaseStateToken(ident="other-tab", cls=State))
    assert await state_managers.expire_soon(manager, "idle-tab", 0.2)
    await state_managers.expire_soon(manager, "never-seen", 0.2)  # refused at the door: nothing to do
    await wait_for(lambda: "idle-tab" not in manager.states, 30)  # dropped 0.2 s on
    assert "other-tab" in manager.states
    await manager.close()


@pytest.mark.asyncio
async def test_on_disk_a_closed_tab_is_due_after_the_short_time_and_never_later_than_reflexs(tmp_path, monkeypatch):
    monkeypatch.setenv("REFLEX_STATES_WORKDIR", str(tmp_path))
    manager = StateManagerDisk(token_expiration=3600)
    await manager.get_state(BaseStateToken(ident="idle-tab", cls=State))
    before = time.time()
    assert await state_managers.expire_soon(manager, "idle-tab", 180)
    after = time.time()
    touched, _ = manager._token_last_touched["idle-tab"]
    # Reflex drops it token_expiration after "touched": 180 s from the call, however long the call
    # took (a millisecond either way for the rounding of a float of 1.7e9 seconds).
    assert before + 180 - 1e-3 <= touched + manager.token_expiration <= after + 180 + 1e-3
    await state_managers.expire_soon(manager, "idle-tab", 600)  # never later than already due
    assert manager._token_last_touched["idle-tab"][0] == touched
    await manager.close()


@pytest.mark.asyncio
async def test_what_a_page_kept_in_memory_for_a_tab_goes_when_its_channel_closes():
    memory = tabs.tab_memory.get()
    memory["closing-tab"] = {admin_state.ASKED: (admin_state.FORGET, "ann@example.com")}
    memory["open-tab"] = {admin_state.ASKED: (admin_state.PAUSE, "a-book")}
    try:
        await tabs.closed("closing-tab")
        assert "closing-tab" not in memory
        assert memory["open-tab"] == {admin_state.ASKED: (admin_state.PAUSE, "a-book")}
    finally:
        memory.pop("closing-tab", None)
        memory.pop("open-tab", None)
