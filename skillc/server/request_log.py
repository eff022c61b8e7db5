"""One structured line per MCP request on stderr: what an operator greps and a log shipper parses.

Every request the server answers (over HTTP or stdio) is one :class:`RequestRecord` on the
``skillc.server.requests`` logger; :func:`configure` puts a handler on it that writes either a
readable line or one JSON object per line (``skillc serve --log-format json``). Nothing here
knows about tools or skills: the server fills the record, this module only writes it.
"""

from __future__ import annotations

import json
import logging
import sys
from dataclasses import asdict, dataclass
from typing import IO, Literal

REQUEST_LOGGER = "skillc.server.requests"
LogFormat = Literal["text", "json"]
# ok: answered; error: an isError result; refused: L3/L4 without consent; input_required: consent
# asked by elicitation; protocol_error: a JSON-RPC error (unknown resource, bad params).
Outcome = Literal["ok", "error", "refused", "input_required", "protocol_error"]

_log = logging.getLogger(REQUEST_LOGGER)
_HANDLER_NAME = "skillc-request-log"


@dataclass(frozen=True)
class RequestRecord:
    method: str
    ms: float
    outcome: Outcome
    tool: str | None = None
    skill: str | None = None
    protocol: str | None = None  # the negotiated protocol version of the request
    detail: str | None = None  # the first line of an error, a resource uri, a prompt name

    def wire(self) -> dict[str, object]:
        out = {k: v for k, v in asdict(self).items() if v is not None}
        out["ms"] = round(self.ms, 2)
        return out

    def text(self) -> str:
        target = self.tool or self.detail or ""
        where = f" {self.skill}" if self.skill else ""
        extra = f" ({self.detail})" if self.detail and self.tool else ""
        return f"{self.method} {target}{where} {self.outcome} {self.ms:.1f}ms{extra}".replace("  ", " ")


def emit(record: RequestRecord) -> None:
    _log.info("%s", record.text(), extra={"skillc_request": record})


class _Formatter(logging.Formatter):
    def __init__(self, fmt: LogFormat) -> None:
        super().__init__()
        self.fmt = fmt

    def format(self, record: logging.LogRecord) -> str:
        request = getattr(record, "skillc_request", None)
        if self.fmt == "json":
            body: dict[str, object] = {"ts": round(record.created, 3), "level": record.levelname.lower()}
            body.update(request.wire() if isinstance(request, RequestRecord) else {"message": record.getMessage()})
            return json.dumps(body, ensure_ascii=False, sort_keys=True)
        return f"skillc: {record.getMessage()}"


def configure(fmt: LogFormat = "text", stream: IO[str] | None = None) -> logging.Handler:
    """Write request lines to ``stream`` (stderr) in ``fmt``; replaces an earlier handler of ours."""
    for old in [h for h in _log.handlers if h.get_name() == _HANDLER_NAME]:
        _log.removeHandler(old)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(_Formatter(fmt))
    _log.addHandler(handler)
    _log.setLevel(logging.INFO)
    _log.propagate = False  # one line per request, not a second one from the root logger
    return handler
