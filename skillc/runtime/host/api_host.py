"""The wx.* host boundary: what a skill's JS may ask of Python, answered for one call context.

Everything that matters is decided here, from the :class:`ApiCallContext` Python built: which
storage scope a key lives in, which hosts ``wx.request`` may reach, who ``wx.login`` says the
user is. JS only chooses the arguments, and those are validated against the argument model of
the call's entry in :data:`~skillc.runtime.host.calls.HOST_CALLS` before a handler sees them.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError

from skillc.diagnostics import Diagnostic
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.contracts import ApiCallContext, CardAction
from skillc.runtime.host.account import account_info
from skillc.runtime.host.calls import HOST_CALLS, ExpireArgs, HostCall, KeyArgs, Mode, SetArgs, SleepArgs
from skillc.runtime.host.identity import CallIdentity, IdentityError
from skillc.runtime.host.payment import PaymentProvider
from skillc.runtime.host.standins import StandInAudit, StandInHandlers
from skillc.runtime.host.storage import Storage, StorageError, StorageScope
from skillc.runtime.host.wxrequest import RequestArgs, RequestRefused, host_allowed, perform
from skillc.runtime.sandbox.engine import HostReply


class ApiHost(StandInHandlers):
    """The host functions of one API call: the ``wx`` and ``api`` entries of the host-call table.
    ``payments`` and ``audit_stand_in`` serve the stand-ins (host/standins.py); a host without them
    answers a payment with a failure; ``app_id``: the project's, for wx.getAccountInfoSync (a
    placeholder when None)."""

    def __init__(
        self,
        context: ApiCallContext,
        config: RuntimeConfig,
        storage: Storage,
        *,
        payments: PaymentProvider | None = None,
        audit_stand_in: StandInAudit | None = None,
        app_id: str | None = None,
    ) -> None:
        self.context = context
        self.app_id = app_id
        self.config = config
        self.payments = payments
        self.audit_stand_in = audit_stand_in
        self.stand_in_audit = []
        self.scope: StorageScope = storage.scope(context.user_did, context.merchant_did, context.scope)
        self.card_actions: list[CardAction] = []
        self.diagnostics: list[Diagnostic] = []
        self._identity: CallIdentity | None = None  # built by the first identity call only
        # Calls only, not their bound handlers: those would tie the host into a cycle with itself and
        # cost a lookup per handler on every API call; a handler is looked up when it is called.
        self._calls: dict[str, HostCall] = {c.name: c for c in HOST_CALLS.values() if self.serves(c)}

    def serves(self, call: HostCall) -> bool:
        """Whether this host answers ``call`` (the card host serves ``card`` calls instead of ``api`` ones)."""
        return call.surface in ("wx", "api")

    def refusal(self, call: HostCall) -> str | None:
        """Why this host refuses a call it serves, or None; the card host's scope.dynamic gate."""
        return None

    # -- dispatch --------------------------------------------------------------------------

    def _lookup(self, name: str, mode: Mode) -> tuple[HostCall, Callable[[Any], Any]] | HostReply:
        call = self._calls.get(name)
        if call is None or mode not in call.modes:
            return HostReply.fail(f"{name} is not available")
        refused = self.refusal(call)
        return HostReply.fail(refused) if refused is not None else (call, getattr(self, "_" + call.handler))

    @staticmethod
    def _validate(call: HostCall, args: Any) -> BaseModel | HostReply:
        try:
            return call.args.model_validate(args or {})
        except ValidationError as err:
            first = err.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "options"
            return HostReply.fail(f"parameter error: {where}: {first['msg']}")

    def call_sync(self, name: str, args: Any) -> HostReply:
        entry = self._lookup(name, "sync")
        if isinstance(entry, HostReply):
            return entry
        call, handler = entry
        parsed = self._validate(call, args)
        return parsed if isinstance(parsed, HostReply) else handler(parsed)

    async def call_async(self, name: str, args: Any) -> HostReply:
        entry = self._lookup(name, "async")
        if isinstance(entry, HostReply):
            return entry
        call, handler = entry
        parsed = self._validate(call, args)
        if isinstance(parsed, HostReply):
            return parsed
        if inspect.iscoroutinefunction(handler):
            return await handler(parsed)  # type: ignore[no-any-return]
        if call.offload:
            return await asyncio.to_thread(handler, parsed)
        return handler(parsed)  # type: ignore[no-any-return]

    # -- storage ---------------------------------------------------------------------------

    def _storage_set(self, a: SetArgs) -> HostReply:
        if not a.key:
            return HostReply.fail("parameter error: key must be a non-empty string")
        try:
            self.scope.set(a.key, json.dumps(a.data, ensure_ascii=False))
        except StorageError as err:
            return HostReply.fail(str(err))
        return HostReply.done()

    def _storage_get(self, a: KeyArgs) -> HostReply:
        try:
            value = self.scope.get(a.key)
        except StorageError as err:
            return HostReply.fail(str(err))
        if value is None:
            return HostReply.fail("data not found")
        return HostReply(ok=True, value={"data": json.loads(value)})

    def _storage_remove(self, a: KeyArgs) -> HostReply:
        try:
            self.scope.remove(a.key)
        except StorageError as err:
            return HostReply.fail(str(err))
        return HostReply.done()

    def _storage_clear(self, _a: BaseModel) -> HostReply:
        self.scope.clear()
        return HostReply.done()

    def _storage_info(self, _a: BaseModel) -> HostReply:
        return HostReply(ok=True, value=self.scope.info().model_dump())

    # -- model context, device, identity -------------------------------------------------------

    def _session_id(self, _a: BaseModel) -> HostReply:
        return HostReply(ok=True, value=self.context.session_id)

    def _device_info(self, _a: BaseModel) -> HostReply:
        return HostReply(ok=True, value=self.config.device.model_dump(by_alias=True))

    def _app_info(self, _a: BaseModel) -> HostReply:
        return HostReply(ok=True, value=self.config.app.model_dump(by_alias=True))

    def _account_info(self, _a: BaseModel) -> HostReply:
        return HostReply(ok=True, value=account_info(self.app_id).model_dump())

    def _expire_all(self, a: ExpireArgs) -> HostReply:
        # The same card_max_actions bound as a card event: a loop of calls cannot grow the list
        # (and the work the card host does with it) without limit.
        limit = self.config.card_max_actions
        if len(self.card_actions) >= limit:
            message = f"expireAllCards: more than {limit} card actions in one call (card_max_actions); dropped"
            if not any(d.code == "RUN045" for d in self.diagnostics):
                self.diagnostics.append(Diagnostic.make("RUN045", message))
            return HostReply.fail(message)
        self.card_actions.append(CardAction(kind="expireAllCards", component_paths=a.paths, match=a.match))
        return HostReply.done()

    @property
    def identity(self) -> CallIdentity:
        if self._identity is None:
            self._identity = CallIdentity(self.context, self.config, self.diagnostics)
        return self._identity

    def _identity_failed(self, err: IdentityError) -> HostReply:
        if err.diagnostic is not None:
            self.diagnostics.append(err.diagnostic)
        return HostReply.fail(err.reason)

    def _login(self, _a: BaseModel) -> HostReply:
        # The code is the capability token itself (host/identity.py says why).
        try:
            return HostReply(ok=True, value={"code": self.identity.login()})
        except IdentityError as err:
            return self._identity_failed(err)

    def _check_session(self, _a: BaseModel) -> HostReply:
        try:
            self.identity.check()
        except IdentityError as err:
            return self._identity_failed(err)
        return HostReply.done()

    # -- network, timers ---------------------------------------------------------------------

    async def _sleep(self, a: SleepArgs) -> HostReply:
        await asyncio.sleep(a.seconds)
        return HostReply.done()

    async def _request(self, a: RequestArgs) -> HostReply:
        allowed = self.config.allowed_hosts
        # Only a listed host learns who calls (the token lookup may wait on SQLite: off the loop).
        identity = await asyncio.to_thread(self.identity.request_headers) if host_allowed(a.url, allowed) else {}
        try:
            result = await perform(
                a,
                allowed,
                timeout_s=self.config.request_timeout_s,
                max_bytes=self.config.request_max_bytes,
                identity=identity,
            )
        except RequestRefused as err:
            reason = str(err)
            if reason.startswith("url not in domain list"):
                self.diagnostics.append(
                    Diagnostic.make(
                        "RUN020",
                        f"wx.request refused: {reason}",
                        hint="add the host to the allow list (skillc call --allow-host HOST)",
                    )
                )
            return HostReply.fail(reason)
        return HostReply(ok=True, value=result.model_dump())
