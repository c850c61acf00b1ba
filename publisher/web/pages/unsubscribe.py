"""The unsubscribe page, where the foot of every list email leads; a provider's one-click request is a
POST to the same address (server/link_pages.py)."""

from publisher.content import list_copy, page_copy
from publisher.rules.list_rules import UNSUBSCRIBE_PATH
from publisher.web.components.layout import page_heading
from publisher.web.components.list_link import Outcomes, Press, SubscribeLink, Title, WithAddress, outcome_panel
from publisher.web.pages.confirm import FAILURES
from publisher.web.pages.registry import site_page
from publisher.web.pages.subscribe import subscribe
from publisher.web.states import list_link_state
from publisher.web.states.list_link_state import UnsubscribeState

OUTCOMES: Outcomes = {
    list_link_state.ASK: (
        WithAddress(list_copy.UNSUBSCRIBE_ASK),
        Press(list_copy.UNSUBSCRIBE_BUTTON, list_copy.UNSUBSCRIBE_BUSY),
    ),
    list_link_state.DONE: (
        Title(list_copy.UNSUBSCRIBE_DONE_TITLE),
        WithAddress(list_copy.UNSUBSCRIBE_DONE),
        SubscribeLink(list_copy.RESUBSCRIBE, subscribe.route),
    ),
    **FAILURES,
}


@site_page(
    route=UNSUBSCRIBE_PATH,
    copy=page_copy.UNSUBSCRIBE,
    on_load=UnsubscribeState.open,
    active_nav=subscribe.route,
    in_sitemap=False,
    indexed=False,
)
def unsubscribe():
    return (
        page_heading(page_copy.UNSUBSCRIBE, intro=False),
        outcome_panel(UnsubscribeState, UnsubscribeState.unsubscribe, OUTCOMES),
    )
