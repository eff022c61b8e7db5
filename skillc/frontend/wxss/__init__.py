"""WXSS frontend: text -> typed :class:`Stylesheet`, with the card style rules checked.

tinycss2 only tokenizes here; rules, declarations, selectors and media queries are read by
this package so every diagnostic carries an exact span (tinycss2's own rule parser reports
at the stop token and, in 1.5.1, with a broken message). Unsupported selectors and
properties are reported once, here, and marked so later phases drop them silently.

By module, each importing only those before it: ``values`` (typed CSS values), ``nodes``
(the stylesheet tree), ``card_rules`` (what cards support, and what WeChat's validator refuses),
``tokens`` (tinycss2 tokens located in the source), ``grammar`` (each supported property's value
grammar), ``reader`` and the ``selectors``, ``declarations`` and ``media``
readers, ``parser`` (``parse_wxss``, ``parse_style_attribute``) and ``json_view``.
"""

from __future__ import annotations

# Each module's __all__ is its public API; the package re-exports them all, so callers keep
# importing from skillc.frontend.wxss whichever module a name lives in.
from skillc.frontend.wxss.card_rules import *  # noqa: F403
from skillc.frontend.wxss.json_view import *  # noqa: F403
from skillc.frontend.wxss.nodes import *  # noqa: F403
from skillc.frontend.wxss.parser import *  # noqa: F403
from skillc.frontend.wxss.tokens import *  # noqa: F403
from skillc.frontend.wxss.values import *  # noqa: F403
