"""The confirmation page, where the link in a confirmation email leads (docs/product.md, The new-release list)."""

from publisher.content import form_copy, list_copy, page_copy
from publisher.rules.list_rules import CONFIRM_PATH
from publisher.web.components.layout import page_heading
from publisher.web.components.list_link import Outcomes, Press, SubscribeLink, Text, Title, WithAddress, outcome_panel
from publisher.web.pages.registry import site_page
from publisher.web.pages.subscribe import subscribe
from publisher.web.states import list_link_state
from publisher.web.states.list_link_state import ConfirmState

_AGAIN = SubscribeLink(list_copy.SUBSCRIBE_AGAIN, subscribe.route)
_PRESS = Press(list_copy.CONFIRM_BUTTON, list_copy.CONFIRM_BUSY)

# The last stages of both link pages, alike.
FAILURES: Outcomes = {
    list_link_state.INVALID: (Title(list_copy.LINK_INVALID_TITLE), Text(list_copy.LINK_INVALID), _AGAIN),
    list_link_state.LIMITED: (Text(form_copy.TOO_MANY_ATTEMPTS),),
    list_link_state.UNAVAILABLE: (Text(list_copy.LINK_TRY_LATER),),
}
# What each stage shows, for the app and for the server's own answer (server/link_pages.py).
OUTCOMES: Outcomes = {
    list_link_state.ASK: (WithAddress(list_copy.CONFIRM_ASK), _PRESS),
    list_link_state.DONE: (Title(list_copy.CONFIRM_DONE_TITLE), WithAddress(list_copy.CONFIRM_DONE)),
    list_link_state.ASK_WAIT: (WithAddress(list_copy.CONFIRM_WAIT_ASK), _PRESS),
    list_link_state.DONE_WAIT: (Title(list_copy.CONFIRM_WAIT_DONE_TITLE), WithAddress(list_copy.CONFIRM_WAIT_DONE)),
    list_link_state.ALREADY: (WithAddress(list_copy.CONFIRM_ALREADY),),
    list_link_state.EXPIRED: (Title(list_copy.CONFIRM_EXPIRED_TITLE), Text(list_copy.CONFIRM_EXPIRED), _AGAIN),
    list_link_state.REPLACED: (Title(list_copy.CONFIRM_REPLACED_TITLE), Text(list_copy.CONFIRM_REPLACED), _AGAIN),
    list_link_state.LEFT: (WithAddress(list_copy.CONFIRM_LEFT), _AGAIN),
    **FAILURES,
}


@site_page(
    route=CONFIRM_PATH,
    copy=page_copy.CONFIRM,
    on_load=ConfirmState.open,
    active_nav=subscribe.route,
    in_sitemap=False,
    indexed=False,
)
def confirm():
    return (
        page_heading(page_copy.CONFIRM, intro=False),
        outcome_panel(ConfirmState, ConfirmState.confirm, OUTCOMES),
    )
