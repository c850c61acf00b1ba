"""The confirmation page, where the link in a confirmation email leads (docs/product.md, The new-release list)."""

from publisher.content import form_copy, list_copy, page_copy
from publisher.rules.list_links import CONFIRM_PATH
from publisher.web.components.forms import action_button
from publisher.web.components.layout import page_heading
from publisher.web.components.list_link import outcome_panel, subscribe_link, text, title, with_address
from publisher.web.pages.registry import site_page
from publisher.web.pages.subscribe import subscribe
from publisher.web.states import list_link as stage
from publisher.web.states.confirm import ConfirmState


@site_page(
    route=CONFIRM_PATH,
    copy=page_copy.CONFIRM,
    on_load=ConfirmState.open,
    active_nav=subscribe.route,
    in_sitemap=False,
    indexed=False,
)
def confirm():
    again = subscribe_link(list_copy.SUBSCRIBE_AGAIN, subscribe.route)
    return (
        page_heading(page_copy.CONFIRM, intro=False),
        outcome_panel(
            ConfirmState.stage,
            {
                stage.ASK: (
                    with_address(list_copy.CONFIRM_ASK, ConfirmState.address),
                    action_button(
                        list_copy.CONFIRM_BUTTON, list_copy.CONFIRM_BUSY, ConfirmState.working, ConfirmState.confirm
                    ),
                ),
                stage.DONE: (
                    title(list_copy.CONFIRM_DONE_TITLE),
                    with_address(list_copy.CONFIRM_DONE, ConfirmState.address),
                ),
                stage.ALREADY: (with_address(list_copy.CONFIRM_ALREADY, ConfirmState.address),),
                stage.EXPIRED: (title(list_copy.CONFIRM_EXPIRED_TITLE), text(list_copy.CONFIRM_EXPIRED), again),
                stage.REPLACED: (title(list_copy.CONFIRM_REPLACED_TITLE), text(list_copy.CONFIRM_REPLACED), again),
                stage.LEFT: (with_address(list_copy.CONFIRM_LEFT, ConfirmState.address), again),
                stage.INVALID: (title(list_copy.LINK_INVALID_TITLE), text(list_copy.LINK_INVALID), again),
                stage.LIMITED: (text(form_copy.TOO_MANY_ATTEMPTS),),
                stage.UNAVAILABLE: (text(list_copy.LINK_TRY_LATER),),
            },
        ),
    )
