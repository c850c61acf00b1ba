"""Tells assets/site.js that the app has rendered the page: browser code that changes the document
(the book search) must not run before, or React would find HTML it did not render."""

from __future__ import annotations

import reflex as rx
from reflex.utils.imports import ImportVar

RENDERED_EVENT = "publisher:app-rendered"
RENDERED_ATTRIBUTE = "data-app-rendered"


class AppRendered(rx.Fragment):
    """An app wrap: its effect runs once, after the page inside it has rendered or hydrated."""

    def add_imports(self):
        return {"react": [ImportVar(tag="useEffect")]}

    def add_hooks(self) -> list[str]:
        return [
            "useEffect(() => {\n"
            f'  document.documentElement.setAttribute("{RENDERED_ATTRIBUTE}", "");\n'
            f'  document.dispatchEvent(new Event("{RENDERED_EVENT}"));\n'
            "}, []);"
        ]


def app_wrap(stateful: bool) -> rx.Component:
    return AppRendered.create()
