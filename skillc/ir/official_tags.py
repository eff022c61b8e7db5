"""What the official rule V003 says about a card's tags and events, for lowering's messages.

V003 (wxa-skills-validate, an error) allows the tags view, text, image, map, button, canvas,
scroll-view, block and template (and, in its newer rules, collapsible-view) with the pattern
``<(?!view|text|image|map|button|canvas|scroll-view|block|template|\\/|!--)[a-zA-Z]``: a prefix
match, so ``<textarea>`` (it starts with ``text``) or ``<imagex>`` pass it although the rule's own
text lists textarea among the refused form controls and the card runtime does not render them.
skillc follows the runtime there (TPL001 stays an error) and says that the gate lets the tag
through. The newer rules also refuse ``bind:`` touch*, longpress, longtap, input, change, submit,
scroll, blur, focus and confirm; TPL008 cites the rule for those.
"""

from __future__ import annotations

import re

V003_TAGS = ("view", "text", "image", "map", "button", "canvas", "scroll-view", "block", "template")
_V003_PREFIX = re.compile("^(?:" + "|".join(re.escape(t) for t in V003_TAGS) + ")")

# Mini-program form controls: WeChat's card runtime has none of them, and V003's fix text says to
# drop them and let the conversation collect the input.
FORM_CONTROLS = frozenset(
    {
        "input",
        "textarea",
        "checkbox",
        "checkbox-group",
        "radio",
        "radio-group",
        "picker",
        "picker-view",
        "picker-view-column",
        "slider",
        "switch",
        "form",
        "label",
        "editor",
    }
)
FORM_HINT = (
    "cards take no typed input: drop the control and let the conversation collect the value "
    "(the official fix), or offer the choices as buttons whose bindtap sends sendFollowUpMessage"
)

_BANNED_EVENTS = frozenset({"longpress", "longtap", "input", "change", "submit", "scroll", "blur", "focus", "confirm"})


def v003_slip(tag: str) -> str | None:
    """The allowed tag whose prefix lets ``tag`` through the official pattern, or None."""
    m = _V003_PREFIX.match(tag)
    return m.group(0) if m is not None and m.group(0) != tag else None


def v003_refuses_event(name: str) -> bool:
    """Whether the official rule names this event among those cards refuse."""
    return name in _BANNED_EVENTS or name.startswith("touch")


def refused_tag_message(tag: str) -> str:
    """TPL001's message for a tag cards do not have, citing the official rule."""
    slip = v003_slip(tag)
    if slip is not None:
        return (
            f"<{tag}> is not a card component; the official rule V003 lets it pass (its tag pattern "
            f"matches the prefix <{slip}>), but WeChat's cards do not render it"
        )
    return f"<{tag}> is not a card component (official rule V003)"
