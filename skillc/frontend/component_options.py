"""Component({...}) options a card does not have: said at the option, not ignored in silence.

A card is one component instance in a conversation, with no parent component, no child custom
components and no page (notes/ai-mode-spec.md section 5: no slot or custom components in cards,
data through notifications only). So the options that connect a component to others or to a page
have nothing to act on, and skillc's Component VM ignores them. WeChat's notes name none of them,
so each is a warning (``JS020``) at the option's key.

A scan, like consistency.py: the top-level keys of the ``Component({...})`` literal; an option
added by a spread or a computed key is not seen.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.consistency import Script, object_keys

COMPONENT_CALL = re.compile(r"\bComponent\s*\(\s*\{")

# option -> (why a card does not have it, what to write instead)
UNSUPPORTED_OPTIONS: dict[str, tuple[str, str]] = {
    "behaviors": (
        "a card has no Behavior(), so the mixins' data, properties, methods and lifetimes never reach it",
        "define the fields in this Component({...}), or require() a shared module and call it from the methods",
    ),
    "relations": (
        "a card has no custom components to relate to",
        "remove it: cards use built-in components only",
    ),
    "externalClasses": (
        "a card has no parent component to pass classes in",
        "style the card with its own classes in index.wxss",
    ),
    "pageLifetimes": (
        "a card lives in a conversation, not on a page: show, hide and resize never fire",
        "use lifetimes (created, attached, detached) and the Expire notification of getViewContext(this)",
    ),
}


def check_component_options(sources: Mapping[str, str], component_dirs: Iterable[str], sink: DiagnosticSink) -> None:
    """JS020 at each unsupported option key of each component's ``Component({...})``."""
    for folder in sorted(component_dirs):
        file = f"{folder}/index.js"
        text = sources.get(file)
        if text is None:
            continue
        script = Script(file, text)
        call = COMPONENT_CALL.search(script.masked)
        if call is None:
            continue  # CMPVM001 at run time: the card never calls Component({...})
        for key in object_keys(script.masked, call.end() - 1).keys:
            found = UNSUPPORTED_OPTIONS.get(key.name)
            if found is None:
                continue
            why, hint = found
            sink.emit(
                "JS020",
                f"Component option `{key.name}` is not supported in cards: {why}; it is ignored",
                file=file,
                span=script.span(key.start, key.end),
                hint=hint,
            )
