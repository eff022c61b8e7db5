"""The wx.* host boundary: what a skill's JS may ask of Python, answered for one call context.

Everything that matters is decided here, from the :class:`ApiCallContext` Python built: which
storage scope a key lives in, which hosts ``wx.request`` may reach, who ``wx.login`` says the
user is. JS only chooses the arguments, and those are validated.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError

from skillc.diagnostics import Diagnostic, Span, explain
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.contracts import ApiCallContext, CardAction
from skillc.runtime.engine import HostReply
from skillc.runtime.storage import Storage, StorageError, StorageScope
from skillc.runtime.wxrequest import RequestRefused, perform

MAX_TIMER_MS = 24 * 3600 * 1000


class _KeyArgs(BaseModel):
    key: str


class _SetArgs(BaseModel):
    key: str
    data: Any = None


class ExpireArgs(BaseModel):
    """The options of expireAllCards / expirePreviousCards."""

    componentPaths: list[str] | None = None
    componentPath: str | None = None
    match: str | None = None

    @property
    def paths(self) -> list[str] | None:
        """``componentPaths``, else the one ``componentPath``; None means every card."""
        if self.componentPaths is not None:
            return self.componentPaths
        return [self.componentPath] if self.componentPath else None


class _SleepArgs(BaseModel):
    ms: float = 0


def runtime_diagnostic(
    code: str, message: str, *, file: str | None = None, span: Span | None = None, hint: str | None = None
) -> Diagnostic:
    """A diagnostic from a running call (no sink: a call's diagnostics travel in its outcome)."""
    info = explain(code)
    return Diagnostic(code=code, severity=info.severity, message=message, file=file, span=span, hint=hint)


class ApiHost:
    """The host functions of one API call."""

    def __init__(self, context: ApiCallContext, config: RuntimeConfig, storage: Storage) -> None:
        self.context = context
        self.config = config
        self.scope: StorageScope = storage.scope(context.user_did, context.merchant_did, context.skill_id)
        self.card_actions: list[CardAction] = []
        self.diagnostics: list[Diagnostic] = []
        self._sync: dict[str, Callable[[Any], HostReply]] = {
            "storage.set": self._storage_set,
            "storage.get": self._storage_get,
            "storage.remove": self._storage_remove,
            "storage.clear": self._storage_clear,
            "storage.info": self._storage_info,
            "session.id": lambda _a: HostReply(ok=True, value=self.context.session_id),
            "cards.expireAll": self._expire_all,
            "device.info": lambda _a: HostReply(ok=True, value=self.config.device.model_dump(by_alias=True)),
            "app.info": lambda _a: HostReply(ok=True, value=self.config.app.model_dump(by_alias=True)),
            "login": self._login,
            "checkSession": lambda _a: HostReply(ok=True, value={}),
        }

    # -- dispatch --------------------------------------------------------------------------

    def call_sync(self, name: str, args: Any) -> HostReply:
        handler = self._sync.get(name)
        if handler is None:
            return HostReply.fail(f"{name} is not available")
        try:
            return handler(args)
        except ValidationError as err:
            first = err.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "options"
            return HostReply.fail(f"parameter error: {where}: {first['msg']}")

    async def call_async(self, name: str, args: Any) -> HostReply:
        if name == "request":
            return await self._request(args)
        if name == "timer.sleep":
            ms = min(max(_SleepArgs.model_validate(args or {}).ms, 0), MAX_TIMER_MS)
            await asyncio.sleep(ms / 1000)
            return HostReply(ok=True, value={})
        if name.startswith("storage."):
            # SQLite may wait on a lock held by another process: keep that off the event loop.
            return await asyncio.to_thread(self.call_sync, name, args)
        return self.call_sync(name, args)

    # -- storage ---------------------------------------------------------------------------

    def _storage_set(self, args: Any) -> HostReply:
        a = _SetArgs.model_validate(args)
        if not a.key:
            return HostReply.fail("parameter error: key must be a non-empty string")
        try:
            self.scope.set(a.key, json.dumps(a.data, ensure_ascii=False))
        except StorageError as err:
            return HostReply.fail(str(err))
        return HostReply(ok=True, value={})

    def _storage_get(self, args: Any) -> HostReply:
        a = _KeyArgs.model_validate(args)
        value = self.scope.get(a.key)
        if value is None:
            return HostReply.fail("data not found")
        return HostReply(ok=True, value={"data": json.loads(value)})

    def _storage_remove(self, args: Any) -> HostReply:
        self.scope.remove(_KeyArgs.model_validate(args).key)
        return HostReply(ok=True, value={})

    def _storage_clear(self, _args: Any) -> HostReply:
        self.scope.clear()
        return HostReply(ok=True, value={})

    def _storage_info(self, _args: Any) -> HostReply:
        return HostReply(ok=True, value=self.scope.info().model_dump())

    # -- model context, identity -------------------------------------------------------------

    def _expire_all(self, args: Any) -> HostReply:
        a = ExpireArgs.model_validate(args or {})
        self.card_actions.append(CardAction(kind="expireAllCards", component_paths=a.paths, match=a.match))
        return HostReply(ok=True, value={})

    def _login(self, _args: Any) -> HostReply:
        # A login code is opaque to the skill; derive it from the DIDs so a backend can map it back.
        c = self.context
        seed = f"{c.user_did}|{c.merchant_did}|{c.skill_id}|{c.session_id}"
        return HostReply(ok=True, value={"code": "did-" + hashlib.sha256(seed.encode()).hexdigest()[:32]})

    # -- network ---------------------------------------------------------------------------

    async def _request(self, args: Any) -> HostReply:
        try:
            result = await perform(
                args,
                self.config.allowed_hosts,
                timeout_s=self.config.request_timeout_s,
                max_bytes=self.config.request_max_bytes,
            )
        except RequestRefused as err:
            reason = str(err)
            if reason.startswith("url not in domain list"):
                self.diagnostics.append(
                    runtime_diagnostic(
                        "RUN020",
                        f"wx.request refused: {reason}",
                        hint="add the host to the allow list (skillc call --allow-host HOST)",
                    )
                )
            return HostReply.fail(reason)
        return HostReply(ok=True, value=result.model_dump())
