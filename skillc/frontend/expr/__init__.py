"""The ``{{ }}`` expression language of WXML, as WeChat's compiler (wcc) accepts it.

A hand-written tokenizer and a precedence-climbing parser: expressions are a large share of
every template, and WXML parse+lower has a throughput target that a generated parser misses.
Where wcc deviates from JavaScript (no exponent literals, no unary ``+``, no member access on
literals or parentheses, ASCII-only names, escapes it does not decode) the parser reports a
diagnostic rather than silently accepting what WeChat would refuse or render differently;
docs/expressions.md lists every rule and the measured wcc behaviour behind it.

The package re-exports its public names, so callers import from ``skillc.frontend.expr``:
``nodes`` (the tree) <- ``lexer`` <- ``parser`` <- ``mustache`` (text -> parsed mustaches),
and ``deps`` (the data paths a tree reads).
"""

from __future__ import annotations

# Each module's __all__ is its public API; the package re-exports them all, so callers keep
# importing from skillc.frontend.expr whichever module a name lives in.
from skillc.frontend.expr.deps import *  # noqa: F403
from skillc.frontend.expr.mustache import *  # noqa: F403
from skillc.frontend.expr.nodes import *  # noqa: F403
from skillc.frontend.expr.parser import *  # noqa: F403
