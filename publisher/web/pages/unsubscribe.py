"""The unsubscribe page, where the link at the foot of every list email leads (docs/product.md, The new-release list).

A mail provider's one-click request is a POST to the same address (server/list_links.py).
"""

from publisher.content import form_copy, list_copy, page_copy
from publisher.rules.list_links import UNSUBSCRIBE_PATH
from publisher.web.components.forms import action_button
from publisher.web.components.layout import page_heading
from publisher.web.components.list_link import outcome_panel, subscribe_link, text, title, with_address
from publisher.web.pages.registry import site_page
from publisher.web.pages.subscribe import subscribe
from publisher.web.states import list_link as stage
from publisher.web.states.unsubscribe import UnsubscribeState


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
        outcome_panel(
            UnsubscribeState.stage,
            {
                stage.ASK: (
                    with_address(list_copy.UNSUBSCRIBE_ASK, UnsubscribeState.address),
                    action_button(
                        list_copy.UNSUBSCRIBE_BUTTON,
                        list_copy.UNSUBSCRIBE_BUSY,
                        UnsubscribeState.working,
                        UnsubscribeState.unsubscribe,
                    ),
                ),
                stage.DONE: (
                    title(list_copy.UNSUBSCRIBE_DONE_TITLE),
                    with_address(list_copy.UNSUBSCRIBE_DONE, UnsubscribeState.address),
                    subscribe_link(list_copy.RESUBSCRIBE, subscribe.route),
                ),
                stage.INVALID: (
                    title(list_copy.LINK_INVALID_TITLE),
                    text(list_copy.LINK_INVALID),
                    subscribe_link(list_copy.SUBSCRIBE_AGAIN, subscribe.route),
                ),
                stage.LIMITED: (text(form_copy.TOO_MANY_ATTEMPTS),),
                stage.UNAVAILABLE: (text(list_copy.LINK_TRY_LATER),),
            },
        ),
    )
