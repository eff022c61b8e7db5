"""The record of the tools/call being answered: its trace (events://) and what its request-log line
says beyond the result. tools/call opens it; the handlers deep in the call fill it in."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from skillc.server.call_trace import CallTrace
from skillc.server.request_log import Outcome


@dataclass
class CallAnswer:
    """What the request log says about a tools/call beyond the result itself."""

    trace: CallTrace
    outcome: Outcome = "ok"
    skill: str | None = None
    detail: str | None = None


# A context variable, not an argument: the registry's handlers share one signature for every tool,
# and the record is filled in several calls down (the API call, a card lookup, a ui_control audit).
_ANSWER: ContextVar[CallAnswer] = ContextVar("skillc_tool_answer")


def current_answer() -> CallAnswer | None:
    """The record of the tools/call this code runs in (None outside one: a card timer, a test)."""
    return _ANSWER.get(None)


@contextmanager
def answering(answer: CallAnswer) -> Iterator[None]:
    token = _ANSWER.set(answer)
    try:
        yield
    finally:
        _ANSWER.reset(token)
