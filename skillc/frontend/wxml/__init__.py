"""WXML source -> typed AST with positions on every node, attribute name and attribute value.

The lark grammar (wxml.lark) is flat: tags, attributes, text, comments. This package matches
open and close tags with a stack, so a mismatched close tag is reported with the place of the
open tag and the tree recovers like an HTML parser would; nothing recurses on deep input.
Almost every item is one token, which the driver matches with lark's own scanner and hands to
the builder without lark's parse loop; a tag read piecewise goes through lark's LALR parser,
with an inline transformer (no parse tree is built).

Malformed input never raises: it becomes a diagnostic, and the parser goes on (restarting
the LALR parser after the defect when it must) and returns the tree it could build.

By module, each importing only those before it: ``nodes`` (the tree), ``text`` (entities and
mustaches inside a token), ``builder`` (the element stack), ``recovery`` (after a syntax
error), ``driver`` (running the parser over a text), ``parser`` (the lark parser and
``parse_wxml``) and ``json_view``.
"""

from __future__ import annotations

# Each module's __all__ is its public API; the package re-exports them all, so callers keep
# importing from skillc.frontend.wxml whichever module a name lives in.
from skillc.frontend.wxml.builder import *  # noqa: F403
from skillc.frontend.wxml.json_view import *  # noqa: F403
from skillc.frontend.wxml.nodes import *  # noqa: F403
from skillc.frontend.wxml.parser import *  # noqa: F403
from skillc.frontend.wxml.text import *  # noqa: F403
