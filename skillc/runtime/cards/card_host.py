"""The card host: the one call chain from an API call to a card, and the live cards of a skill.

    call:  ApiRuntime.call (declared, inputSchema, consent, VM, result rules, audit)
           -> isError: content only
           -> bound component: mount a card (created, attached, Input, Result, Render IR)
              -> it throws or cannot render: a FallbackRequest (the caller builds the CardSpec)
           -> no component: a FallbackRequest from structuredContent, or plain text
    event: a tap or image load/error on a node -> handlers -> setData -> patches
    follow: the api/call blocks of a card's follow-up message -> call (the same chain, never a shortcut)
    timers: (scope.dynamic) a due timer -> its callback -> setData -> patches, into the card's update
           stream; real time (asyncio, ``skillc serve``) or a virtual clock moved by ``advance``

Each card instance keeps its own QuickJS context, pinned to one of a few card threads (a context
is never used by two threads at once), in an LRU of live cards. Its ``data`` is written to the
state store after every event, so an evicted card (or one from before a restart, or one another
instance made) is rebuilt on demand. Several instances may share the store: each event runs under
the card's lock (card_store.CardStore.card_lock) on the newest copy (a copy older than the store's
version is rebuilt first), and is written only at the version that copy was read at.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
import time
import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from skillc.diagnostics import Diagnostic, DiagnosticSink, Severity, render_blockers
from skillc.ir.component import CompiledComponent, compile_component
from skillc.ir.diff import ReplaceRoot, patches_to_plain
from skillc.ir.viewport import Viewport
from skillc.runtime.api.api_runtime import ApiRuntime, Approver
from skillc.runtime.cards.card import Card, CardSetup, Step, dimensions_for
from skillc.runtime.cards.card_layout import FirstHeights
from skillc.runtime.cards.card_models import (
    ApiCallAction,
    CallOutcome,
    CardUpdatesView,
    CardView,
    ComponentAction,
    EventOutcome,
    ExpireAllCards,
    ExpirePreviousCards,
    FallbackRequest,
    SendFollowUpMessage,
    TimerFiring,
)
from skillc.runtime.cards.card_store import CardRecord, CardStore, Lru, StoredCard
from skillc.runtime.cards.card_timers import RealClock, TimerClock, TimerSetup, VirtualClock
from skillc.runtime.cards.component_host import CardBinding
from skillc.runtime.cards.first_renders import FirstRenders
from skillc.runtime.cards.kept_mounts import KeptMounts
from skillc.runtime.cards.timer_driver import TimerDriver
from skillc.runtime.contracts import ApiCallContext, ApiCallOutcome, ApprovalRequest, AtomicApiResult
from skillc.runtime.sandbox.engine import BackgroundLoop
from skillc.runtime.sandbox.modules import SkillCode
from skillc.runtime.state import StateError
from skillc.threadnames import name_os_thread

DEFAULT_EXPIRED_TEXT = "服务已过期"
# One wait of a flow fires at most this many timer callbacks (a safety net: the minimum interval
# already bounds them to wait / card_timer_min_interval_ms per timer).
MAX_FIRINGS_PER_ADVANCE = 10_000
# An event whose write finds the card changed since its copy was read is applied again on the
# reloaded card. Under the card lock that happens only when two cards share a lock slot or there is
# no lock (no fcntl), so a few attempts are plenty; past them the event is refused (CMPVM050).
CARD_WRITE_ATTEMPTS = 5
T = TypeVar("T")
log = logging.getLogger("skillc.runtime")
TimerObserver = Callable[[TimerFiring], Any]
Approve = bool | Approver | None


def _approver(approve: Approve) -> Approver | None:
    if approve is None or callable(approve):
        return approve
    answer = bool(approve)

    def decide(_request: ApprovalRequest) -> bool:
        return answer

    return decide


@dataclass
class _Live:
    card: Card
    executor: ThreadPoolExecutor
    record: CardRecord
    version: int = 1  # the store's version of the card this copy was read or last written at


class CardHost:
    """Cards for one skill, on top of its :class:`ApiRuntime` (which the caller owns and closes)."""

    def __init__(
        self,
        runtime: ApiRuntime,
        *,
        viewport: Viewport | None = None,
        max_cards: int = 64,
        threads: int = 2,
        slice_timeout_s: float = 5.0,
        card_ids: Callable[[], str] | None = None,
        clock: TimerClock | None = None,
    ) -> None:
        """``clock``: the time of dynamic cards' timers; real by default (they fire on their own),
        a :class:`VirtualClock` for replays (only :meth:`advance` fires them)."""
        self.runtime = runtime
        self.package = runtime.package
        self.viewport = viewport or Viewport()
        self.slice_timeout_s = slice_timeout_s
        # Readable ids (card-1, card-2) for replays and snapshots; otherwise 128 random bits, so no
        # caller can guess another session's card (the card tools check the session as well).
        self._new_id = card_ids or (lambda: f"card-{secrets.token_hex(16)}")
        self.store = CardStore.of(runtime.config)
        self._threads = [
            ThreadPoolExecutor(1, thread_name_prefix=f"skillc-card-{i}", initializer=name_os_thread)
            for i in range(max(threads, 1))
        ]
        self._turn = 0
        self._host_loop = BackgroundLoop()
        self._live: Lru[str, _Live] = Lru(max_cards, self._evict)
        self._evicting: set[Future[Any]] = set()  # the detaching of evicted cards, still running
        self._mounting = 0  # mounts under way: each will add a card to the LRU
        # One rebuild at a time per card: two taps on a card this instance has not seen share it.
        self._rebuilding: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        self._compiled: dict[str, tuple[CompiledComponent | None, list[Diagnostic]]] = {}
        # Cards mounted on the same data lay out once (the layout costs as much as the render).
        self._first_heights = FirstHeights()
        # ... and from the third card on the same data, render once (first_renders.py).
        self._first_renders = FirstRenders()
        # ... and a mount whose code reached nothing outside its context runs once (kept_mounts.py).
        self._kept_mounts = KeptMounts()
        self._code = SkillCode.of(self.package, components=True)
        manifest = self.package.manifest
        self._declared = frozenset(a.name for a in manifest.apis) if manifest else frozenset()
        # The card table is pruned on the first call and then every card_table_prune_every calls.
        self._calls = 0
        self._skill_ids: set[str] = {self.runtime.skill_scope}  # the scopes this host's cards are under
        self.clock: TimerClock = clock or RealClock()
        self._timer_order = itertools.count(1).__next__  # equal due times fire in the order set
        self._streams = itertools.count(1)
        self._hidden = False  # the whole host hidden (set_visibility without cards): new cards start hidden
        self._driver = TimerDriver(self.clock, self._fire_timers)
        # Hears of every timer callback that ran on its own (the server: console, session events).
        self.on_timer: TimerObserver | None = None

    # -- the public surface ----------------------------------------------------------------------

    async def call(
        self,
        api_name: str,
        arguments: Any = None,
        context: ApiCallContext | None = None,
        *,
        approve: Approve = None,
        mount: bool = True,
    ) -> CallOutcome:
        """One call through the whole chain; mounts the bound card or says how to fall back.
        ``mount=False``: the caller cannot show cards (an MCP client without MCP Apps), so none is
        mounted and no fallback is built; the API's own card actions still apply."""
        ctx = context or self.runtime.context(api_name)
        await self._maybe_prune()
        api = await self.runtime.call(api_name, arguments, ctx, approver=_approver(approve))
        out = CallOutcome(api=api)
        for action in api.card_actions:  # wx.modelContext.expireAllCards in the API
            try:
                expired = await self.expire_matching(ctx.session_id, action.component_paths, action.match)
            except StateError as err:
                # The API already ran (a payment may have gone through): its outcome is answered;
                # the cards it meant to expire stay live, which the log says (SRV052).
                log.warning(
                    "SRV052 %s/%s: its cards could not be expired after it ran: %s", ctx.skill_id, api_name, err
                )
                expired = []
            out.actions.append(
                ExpireAllCards(component_paths=action.component_paths, match=action.match, expired=expired)
            )
        if api.result.is_error or not mount:
            return out
        args = arguments if isinstance(arguments, dict) else {}
        return await self._show(out, args, ctx, None)

    async def show(
        self,
        api_name: str,
        result: AtomicApiResult,
        arguments: dict[str, Any] | None = None,
        context: ApiCallContext | None = None,
        *,
        viewport: Viewport | None = None,
    ) -> CallOutcome:
        """The card ``api_name`` shows for a ``result`` it did not have to compute (a recorded result,
        the debug console's structuredContent): everything after the call, as :meth:`call` does it.
        ``viewport``: this card's device size instead of the host's."""
        ctx = context or self.runtime.context(api_name, arguments)
        out = CallOutcome(api=ApiCallOutcome(api_name=api_name, result=result))
        if result.is_error:
            return out
        return await self._show(out, arguments or {}, ctx, viewport)

    async def _show(
        self, out: CallOutcome, args: dict[str, Any], ctx: ApiCallContext, viewport: Viewport | None
    ) -> CallOutcome:
        api_name, result = out.api.api_name, out.api.result
        spec = self.package.manifest.api(api_name) if self.package.manifest else None
        path = spec.component_path if spec else None
        if not path:
            if result.structured_content is not None:
                out.fallback = self._fallback(result, f"{api_name} has no component", None)
            return out
        compiled, diags = self._compile(path)
        if compiled is None:
            message = f"{path} cannot be compiled, so {api_name} shows a generic card"
            out.diagnostics += [*diags, Diagnostic.make("CMPVM008", message, file="mcp.json")]
            out.fallback = self._fallback(result, message, path)
            return out
        out.findings += diags
        card_id = self._new_id()
        self._skill_ids.add(ctx.scope)
        setup = self._setup(card_id, path, api_name, compiled, ctx, viewport or self.viewport)
        # At the bound, the least recently used card makes room now and is detached inside this
        # mount's job, on its own thread, which the new card takes over: eviction then costs no
        # hand-off of its own to a card thread (a wake-up, and a second thread contending for the
        # interpreter, per call once the bound is reached).
        victim = self._live.make_room(self._mounting + 1)
        if victim is not None:
            self._driver.cancel(victim[0])
        executor = victim[1].executor if victim is not None else self._pick_thread()
        record = CardRecord(
            card_id=card_id,
            seq=0,  # numbered on the card thread when it is stored: no extra thread hop per call
            component_path=path,
            api_name=api_name,
            context=ctx,
            expired_text=setup.expired_text,
        )
        self._mounting += 1
        try:
            card, step, view = await self._run(
                executor, self._mount_job, setup, record, result, args, victim[1] if victim is not None else None
            )
        except BaseException:
            if victim is not None:  # the job may never have started: detach it after it (closing twice is a no-op)
                self._evict(*victim)
            raise
        finally:
            self._mounting -= 1
        out.diagnostics += step.diagnostics
        out.console += step.console
        if step.failure is not None or view is None:
            out.fallback = self._fallback(result, step.failure or "the card failed", path)
            return out
        live = _Live(card, executor, record)
        self._live.put(card_id, live)
        out.card = view
        out.actions += await self._apply(step.actions, ctx.session_id, card_id)
        self._arm(live)
        return out

    async def event(
        self, card_id: str, node_id: str, event: str = "tap", detail: Any = None, *, with_document: bool = True
    ) -> EventOutcome:
        """Deliver a tap (bubbling) or an image load/error to a node; returns the patches and actions."""
        live, diags = await self._obtain(card_id)
        if live is None:
            return EventOutcome(card_id=card_id, diagnostics=diags)
        step, view = await self._run(live.executor, self._event_job, live, node_id, event, detail, with_document)
        return await self._event_outcome(live, step, view, diags)

    async def advance(self, ms: float) -> list[TimerFiring]:
        """Move a virtual clock on by ``ms`` and run every timer that falls due on the way, in
        order (due time, then the order they were set in), each at its own time."""
        clock = self.clock
        if not isinstance(clock, VirtualClock):
            raise TypeError("advance needs a CardHost built with a VirtualClock")
        target = clock.now + max(ms, 0.0)
        fired: list[TimerFiring] = []
        while len(fired) < MAX_FIRINGS_PER_ADVANCE:
            best: tuple[tuple[float, int], _Live] | None = None
            for live in self._live.values():
                if live.card.updates is None or live.card.dead or live.card.expired:
                    continue
                due = live.card.timers.next_due()
                if due is not None and due[0] <= target + 1e-6 and (best is None or due < best[0]):
                    best = (due, live)
            if best is None:
                break
            clock.now = min(max(clock.now, best[0][0]), target)
            got = await self._fire_card(best[1])
            if not got:  # nothing was due after all (rounding): never spin
                break
            fired += got
        clock.now = target
        return fired

    async def set_visibility(
        self, hidden: bool, card_ids: Sequence[str] | None = None
    ) -> tuple[list[str], list[Diagnostic]]:
        """The host hides or shows cards: a hidden dynamic card's timers pause and resume with the
        time they had left. ``card_ids`` None: every card, and the cards mounted from now on.
        Returns the dynamic cards it applied to."""
        diags: list[Diagnostic] = []
        targets: list[_Live] = []
        if card_ids is None:
            self._hidden = hidden
            targets = sorted(self._live.values(), key=lambda live: live.record.seq)  # mount order
        else:
            for card_id in card_ids:
                live, found = await self._obtain(card_id)
                diags += found
                if live is not None:
                    targets.append(live)
        changed = []
        for live in targets:
            if live.card.updates is None:
                continue
            await self._run(live.executor, live.card.set_hidden, hidden)
            changed.append(live.card.card_id)
            self._arm(live)
        return changed, diags

    async def updates(self, card_id: str, since: str | None) -> tuple[CardUpdatesView | None, list[Diagnostic]]:
        """What changed on a dynamic card after the cursor ``since`` (a reset when it cannot say)."""
        live, diags = await self._obtain(card_id)
        if live is None:
            return None, diags
        if live.card.updates is None:
            message = f"card {card_id} has no update stream: its component does not declare scope.dynamic"
            return None, [*diags, Diagnostic.make("CMPVM012", message)]
        return await self._run(live.executor, self._updates_job, live, since), diags

    async def expire(self, card_ids: Sequence[str]) -> list[EventOutcome]:
        """Expire cards: Expire notification, timers cleared, expiredText shown. Expired cards ignore events."""
        outcomes = []
        for card_id in card_ids:
            live, diags = await self._obtain(card_id)
            if live is None:
                outcomes.append(EventOutcome(card_id=card_id, diagnostics=diags))
                continue
            step, view = await self._run(live.executor, self._expire_job, live)
            outcomes.append(await self._event_outcome(live, step, view, diags))
        return outcomes

    async def expire_matching(
        self,
        session_id: str,
        component_paths: Sequence[str] | None = None,
        match: str | None = None,
        *,
        before: str | None = None,
    ) -> list[str]:
        """Expire the session's live-or-stored cards on these component paths (all without paths);
        ``match='latest'`` only the newest one. ``before``: a card id; only cards created before
        it count (expirePreviousCards: neither the caller nor a later card). Returns the ids expired."""
        records = await asyncio.to_thread(self.store.session_cards, self.runtime.skill_scope, session_id)
        if before is not None:
            # Oldest first (by seq), so the caller's position splits older from newer; a caller with
            # no stored record has no known place in the order, and expires nothing.
            at = next((i for i, r in enumerate(records) if r.card_id == before), 0)
            records = records[:at]
        wanted = [_normal_path(p) for p in component_paths] if component_paths else None
        hits = [
            r
            for r in records
            if not r.expired and (wanted is None or any(_normal_path(r.component_path).endswith(w) for w in wanted))
        ]
        if match == "latest":
            hits = hits[-1:]
        ids = [r.card_id for r in hits]
        await self.expire(ids)
        return ids

    async def restyle(self, card_id: str, *, color_scheme: str | None = None, width: int | None = None) -> EventOutcome:
        """Show a card in the host's colour scheme or container width: a replaceRoot, remembered
        for the card (a rebuilt card keeps it)."""
        live, diags = await self._obtain(card_id)
        if live is None:
            return EventOutcome(card_id=card_id, diagnostics=diags)
        current = live.card.viewport
        update: dict[str, Any] = {}
        if color_scheme in ("light", "dark"):
            update["color_scheme"] = color_scheme
        if width is not None:
            update["width"] = width
        viewport = current.model_copy(update=update)
        step, view = await self._run(live.executor, self._restyle_job, live, viewport)
        return await self._event_outcome(live, step, view, diags)

    async def card(self, card_id: str) -> CardView | None:
        """The card as the store holds it now (see :meth:`card_at`)."""
        got = await self.card_at(card_id)
        return got[0] if got is not None else None

    async def card_at(self, card_id: str) -> tuple[CardView, int] | None:
        """The card as the store holds it now, with the store version it shows. A copy older
        than the store's version (another worker or instance changed the card) is brought up to
        it first, so a read shows the same card wherever it lands; an evicted card is rebuilt."""
        live, _diags = await self._obtain(card_id)
        if live is None:
            return None
        return await self._run(live.executor, self._view_job, live)

    async def follow(
        self,
        action: SendFollowUpMessage | ApiCallAction,
        context: ApiCallContext | None = None,
        *,
        approve: Approve = None,
    ) -> list[CallOutcome]:
        """Run the api/call blocks of a follow-up message (or a reapplyApiCall) through :meth:`call`."""
        calls = action.api_calls() if isinstance(action, SendFollowUpMessage) else [action]
        outcomes = []
        for c in calls:
            ctx = context
            if ctx is None:
                live = self._live.get(action.card_id)
                ctx = live.record.context if live else None
            outcomes.append(await self.call(c.name, c.arguments, ctx, approve=approve))
        return outcomes

    async def close(self) -> None:
        """Detach every live card and stop the card threads (the ApiRuntime stays open)."""
        await self._driver.close()
        # Cards evicted earlier finish detaching first: their lifetimes ran before the live cards'.
        for detaching in list(self._evicting):
            await asyncio.wrap_future(detaching)
        for live in self._live.values():
            await self._run(live.executor, live.card.close)
        for executor in self._threads:
            executor.shutdown(wait=True)
        self._host_loop.close()

    # -- jobs (run on the card's thread) ---------------------------------------------------------

    def _mount_job(
        self,
        setup: CardSetup,
        record: CardRecord,
        result: AtomicApiResult,
        args: dict[str, Any],
        evicted: _Live | None = None,
    ) -> tuple[Card, Step, CardView | None]:
        """``evicted``: the card this one takes the place of (and the thread of), detached after the
        mount as an eviction detaches it (its data is already persisted)."""
        try:
            return self._mount(setup, record, result, args)
        finally:
            if evicted is not None:
                try:
                    evicted.card.close()
                except Exception:  # never the new card's failure: a submitted detach would be dropped too
                    log.exception("card %s could not be detached on eviction", evicted.card.card_id)

    def _mount(
        self, setup: CardSetup, record: CardRecord, result: AtomicApiResult, args: dict[str, Any]
    ) -> tuple[Card, Step, CardView | None]:
        card = Card(setup)
        step = card.mount(result, args)
        if step.failure is not None:
            step.diagnostics += card.close()
            return card, step, None
        assert card.data_json is not None  # a mounted card has rendered within its limits
        try:
            self.store.insert_new(record, card.data_json)
        except StateError as err:
            # The API call already ran (a payment may have gone through): its result is answered,
            # shown by the fallback card, rather than lost to the store's fault.
            step.failure = f"{err.code} the card could not be kept in the state store: {err}"
            step.diagnostics += card.close()
            return card, step, None
        return card, step, card.view(record.context.session_id)

    def _event_job(
        self, live: _Live, node_id: str, kind: str, detail: Any, with_document: bool
    ) -> tuple[Step, CardView | None]:
        step = self._serialised(live, lambda: live.card.event(node_id, kind, detail), f"the {kind} on {node_id}")
        if step.failure is not None:  # not applied: no document, so the view hears of an error
            return step, None
        live.card.record("event", step)
        return self._after(live, step, with_document)

    def _fire_job(self, live: _Live) -> list[tuple[int, float, Step]]:
        with self.store.card_lock(live.card.card_id):
            if self._stale(live):
                # Another instance moved the card on since this copy's last write, timers and all
                # (a rebuilt copy sets the timers of created/attached again): the copy takes its
                # data and skips the beats now due, so one beat is applied once across the fleet.
                self._reload(live)
                live.card.timers.skip_due()
                return []
            fired = live.card.fire_due()
            for timer_id, _at, step in fired:
                live.card.record("timer", step, timer_id)
                if not self._write(live, step, False):
                    live.version = -1  # the next event reloads the card first
                self._after(live, step, False)
        return fired

    def _view_job(self, live: _Live) -> tuple[CardView, int]:
        # No card lock: a read changes nothing in the store, and the copy is only touched on its
        # own thread; an event still checks the version again under the lock before it writes.
        if self._stale(live):
            step = self._reload(live)
            if step.failure is not None:  # the copy as it was is the best this process can show
                log.warning(
                    "card %s could not be brought up to the stored version: %s", live.card.card_id, step.failure
                )
        return live.card.view(live.record.context.session_id), live.version

    def _updates_job(self, live: _Live, since: str | None) -> CardUpdatesView:
        # A copy behind the store (the card changed on another worker or instance) is brought up
        # to it, and the view gets the whole card: this copy's stream never saw those changes.
        stale = self._stale(live)
        if stale:
            step = self._reload(live)
            if step.failure is not None:
                log.warning(
                    "card %s could not be brought up to the stored version: %s", live.card.card_id, step.failure
                )
        card = live.card
        assert card.updates is not None
        got = None if stale else card.updates.since(since)
        if got is None:  # the view is on another stream or too far behind: the whole tree again
            reset = {"seq": card.updates.seq, "kind": "reset", "actions": []}
            reset["patches"] = patches_to_plain([ReplaceRoot(card.renderer.document.root)])
            entries = [reset]
        else:
            entries = [u.wire() for u in got]
        return CardUpdatesView(
            card_id=card.card_id,
            cursor=card.updates.cursor,
            updates=entries,
            expired=card.expired,
            hidden=card.timers.hidden,
            timers=card.timers.count if not card.dead else 0,
            poll_ms=self.runtime.config.card_timer_min_interval_ms,
        )

    def _expire_job(self, live: _Live) -> tuple[Step, CardView | None]:
        def expire() -> Step:
            live.record.expired = True
            return live.card.expire()

        step = self._serialised(live, expire, "the expiry", save_record=lambda _step: True)
        live.card.record("expire", step)
        return self._after(live, step, True)

    def _restyle_job(self, live: _Live, viewport: Viewport) -> tuple[Step, CardView | None]:
        def restyle() -> Step:
            step = live.card.restyle(viewport)
            if step.patches:
                live.record.viewport = viewport
            return step

        step = self._serialised(live, restyle, "the restyle", save_record=lambda s: bool(s.patches))
        live.card.record("restyle", step)
        return step, live.card.view(live.record.context.session_id)

    def _serialised(
        self, live: _Live, apply: Callable[[], Step], what: str, save_record: Callable[[Step], bool] | None = None
    ) -> Step:
        """``apply`` on the newest copy of the card and its result written, under the card's lock
        on every instance; a write that finds the card changed since (only without a working
        lock) reloads the card and applies again, so no event is lost or applied twice."""
        card_id = live.card.card_id
        notes: list[Diagnostic] = []
        with self.store.card_lock(card_id):
            for _ in range(CARD_WRITE_ATTEMPTS):
                if self._stale(live):
                    reloaded = self._reload(live)
                    notes += reloaded.diagnostics
                    if reloaded.failure is not None:
                        reloaded.diagnostics = notes
                        return reloaded
                step = apply()
                if self._write(live, step, bool(save_record and save_record(step))):
                    step.diagnostics = notes + step.diagnostics
                    return step
                live.version = -1  # written elsewhere between the check and the write: reload
        message = (
            f"card {card_id} was changed by another instance each of {CARD_WRITE_ATTEMPTS} times {what} was applied;"
            " it was not applied"
        )
        return Step(failure=message, diagnostics=[*notes, Diagnostic.make("CMPVM050", message)])

    def _stale(self, live: _Live) -> bool:
        """Whether the store holds a newer version of the card than this copy (a card no longer
        stored is not stale: its copy goes on as before versions, unwritten)."""
        stored = self.store.version_of(live.card.card_id)
        return stored is not None and stored != live.version

    def _write(self, live: _Live, step: Step, record: bool) -> bool:
        """Write what ``step`` changed at the copy's version; False when the store moved on."""
        data = live.card.data_json if step.data_changed and live.card.data_json is not None else None
        if data is None and not record:
            return True
        version = self.store.save(live.card.card_id, live.version, data=data, record=live.record if record else None)
        if version is None:
            return self.store.version_of(live.card.card_id) is None  # pruned meanwhile: nothing to overwrite
        live.version = version
        return True

    def _reload(self, live: _Live) -> Step:
        """Bring a stale copy (on its own thread) up to the store: a live copy takes the stored
        data in place (CMPVM051); one that cannot (closed, or expired on one side only) is
        replaced by the card rebuilt from the store (CMPVM014)."""
        card_id = live.card.card_id
        stored = self.store.load_versioned(card_id)
        if stored is None:
            message = f"there is no card {card_id!r} for {self.package.name}"
            return Step(failure=message, diagnostics=[Diagnostic.make("CMPVM012", message)])
        if not live.card.dead and live.card.expired == stored.record.expired:
            step = live.card.refresh(stored.data)
            if step.failure is None:
                live.record, live.version = stored.record, stored.version
                return step
        card, step = self._build(card_id, stored)
        if card is None:
            return step
        old, live.card, live.record, live.version = live.card, card, stored.record, stored.version
        old.close()  # the stale copy's detached runs, as on eviction
        return step

    def _build(self, card_id: str, stored: StoredCard) -> tuple[Card | None, Step]:
        """The card rebuilt from what the store holds, on the calling (card) thread."""
        record = stored.record
        compiled, diags = self._compile(record.component_path)
        if compiled is None:
            message = f"card {card_id} cannot be rebuilt: {record.component_path} no longer compiles"
            return None, Step(failure=message, diagnostics=[*diags, Diagnostic.make("CMPVM008", message)])
        viewport = record.viewport or self.viewport
        setup = self._setup(card_id, record.component_path, record.api_name, compiled, record.context, viewport)
        card, step = self._rebuild_job(setup, record, stored.data)
        return (None if step.failure is not None else card), step

    def _after(self, live: _Live, step: Step, with_document: bool) -> tuple[Step, CardView | None]:
        if live.card.dead:
            step.diagnostics += live.card.close()
        return step, (live.card.view(live.record.context.session_id) if with_document else None)

    def _rebuild_job(self, setup: CardSetup, record: CardRecord, data: dict[str, Any]) -> tuple[Card, Step]:
        card = Card(setup)
        step = card.rebuild(data, record.expired)
        if step.failure is not None:
            step.diagnostics += card.close()
        return card, step

    # -- helpers ---------------------------------------------------------------------------------

    async def _event_outcome(
        self, live: _Live, step: Step, view: CardView | None, diags: list[Diagnostic]
    ) -> EventOutcome:
        if live.card.dead:
            self._live.pop(live.card.card_id)
        actions = await self._apply(step.actions, live.record.context.session_id, live.card.card_id)
        dynamic = live.card.updates is not None
        self._arm(live)
        return EventOutcome(
            card_id=live.card.card_id,
            handled=step.handled,
            patches=step.patches,
            actions=actions,
            document=view.document if view is not None else None,
            content_height=live.card.content_height,
            diagnostics=diags + step.diagnostics,
            console=step.console,
            after=step.after,
            cursor=step.cursor,
            timers=(0 if live.card.dead else live.card.timers.count) if dynamic else None,
        )

    # -- dynamic cards' timers -------------------------------------------------------------------

    def _arm(self, live: _Live) -> None:
        """Real time: wake up when the card's next timer is due (none: hidden, expired, closed)."""
        card = live.card
        if card.updates is None:
            return
        due = None if card.dead or card.expired else card.timers.next_due()
        self._driver.arm(card.card_id, due[0] if due is not None else None)

    async def _fire_card(self, live: _Live) -> list[TimerFiring]:
        fired = await self._run(live.executor, self._fire_job, live)
        out = []
        for timer_id, at, step in fired:
            outcome = await self._event_outcome(live, step, None, [])
            out.append(TimerFiring(card_id=live.card.card_id, timer_id=timer_id, at_ms=at, outcome=outcome))
        return out

    async def _fire_timers(self, card_id: str) -> None:
        """The real clock's wake-up for one card: its due timers run, the observer hears of each."""
        live = self._live.peek(card_id)
        if live is None:
            return
        for firing in await self._fire_card(live):
            if self.on_timer is not None:
                try:
                    got = self.on_timer(firing)
                    if asyncio.iscoroutine(got):
                        await got
                except Exception:  # an observer's bug must not stop the card's timers
                    log.exception("a timer observer failed")
        self._arm(live)

    def session_of(self, card_id: str) -> str | None:
        """The session a live card belongs to (None when it is not live)."""
        live = self._live.peek(card_id)
        return live.record.context.session_id if live is not None else None

    def _new_stream(self) -> str:
        # Replays print the same cursors every time; a server's survive no restart (a rebuilt card's
        # stream must differ from the one a view still holds).
        return f"u{next(self._streams)}" if not self.clock.real else secrets.token_hex(6)

    async def _apply(self, actions: list[ComponentAction], session_id: str, card_id: str) -> list[ComponentAction]:
        """Expiry actions take effect here; the rest go back to the caller as they are."""
        for action in actions:
            if isinstance(action, ExpirePreviousCards):
                action.expired = await self.expire_matching(
                    session_id, action.component_paths, action.match, before=card_id
                )
            elif isinstance(action, ExpireAllCards):
                action.expired = await self.expire_matching(session_id, action.component_paths, action.match)
        return actions

    async def _obtain(self, card_id: str) -> tuple[_Live | None, list[Diagnostic]]:
        live = self._live.get(card_id)
        if live is not None:
            return live, []
        lock = self._rebuilding.get(card_id)
        if lock is None:
            lock = self._rebuilding[card_id] = asyncio.Lock()
        async with lock:
            return await self._obtain_stored(card_id)

    async def _obtain_stored(self, card_id: str) -> tuple[_Live | None, list[Diagnostic]]:
        live = self._live.get(card_id)
        if live is not None:  # rebuilt by the call this one waited for
            return live, []
        stored = await asyncio.to_thread(self.store.load_versioned, card_id)
        if stored is None or stored.record.context.scope != self.runtime.skill_scope:
            return None, [Diagnostic.make("CMPVM012", f"there is no card {card_id!r} for {self.package.name}")]
        executor = self._pick_thread()
        card, step = await self._run(executor, self._build, card_id, stored)
        if card is None:
            return None, step.diagnostics
        live = _Live(card, executor, stored.record, stored.version)
        self._live.put(card_id, live)
        self._arm(live)  # a rebuilt card's created / attached may have set timers again
        return live, step.diagnostics

    def _setup(
        self,
        card_id: str,
        path: str,
        api_name: str,
        compiled: CompiledComponent,
        ctx: ApiCallContext,
        viewport: Viewport,
    ) -> CardSetup:
        comp = self.package.manifest.component(path) if self.package.manifest else None
        binding = CardBinding(
            card_id=card_id,
            component_path=path,
            api_name=api_name,
            dynamic=bool(comp and comp.dynamic),
            dimensions=dimensions_for(viewport),
            declared_apis=self._declared,
        )
        return CardSetup(
            binding=binding,
            component=compiled,
            context=ctx,
            viewport=viewport,
            code=self._code,
            config=self.runtime.config,
            storage=self.runtime.storage,
            loop=self._host_loop.loop,
            native=self.runtime.mode == "interrupt",
            slice_timeout_s=self.slice_timeout_s,
            expired_text=(comp.expired_text if comp and comp.expired_text else DEFAULT_EXPIRED_TEXT),
            timing=TimerSetup(self.clock, self._timer_order, self._new_stream(), self._hidden),
            first_heights=self._first_heights,
            first_renders=self._first_renders,
            kept_mounts=self._kept_mounts,
        )

    def _compile(self, path: str) -> tuple[CompiledComponent | None, list[Diagnostic]]:
        """The component, with its findings (errors and warnings: what every card of it reports);
        or None, with every diagnostic, when the template leaves no tree to draw. Once per path."""
        hit = self._compiled.get(path)
        if hit is None:
            sink = DiagnosticSink()
            parts = path.split("/")
            name = parts[1] if len(parts) == 3 and parts[0] == "components" and parts[2] == "index" else None
            compiled = compile_component(self.package, name, sink) if name and name in self.package.components else None
            if compiled is None or render_blockers(sink):
                hit = (None, list(sink))
            else:
                hit = (compiled, [d for d in sink if d.severity is not Severity.INFO])
            self._compiled[path] = hit
        return hit

    def _fallback(self, result: AtomicApiResult, reason: str, path: str | None) -> FallbackRequest | None:
        return FallbackRequest(
            structured_content=result.structured_content or {},
            text=result.text or None,
            reason=reason,
            component_path=path,
        )

    async def _maybe_prune(self) -> None:
        """Expired and evicted card rows: by age, then oldest first beyond the row and byte bounds."""
        calls, self._calls = self._calls, self._calls + 1
        config = self.runtime.config
        if calls % config.card_table_prune_every:
            return
        keep = set(self._live.keys())
        cutoff = time.time() - config.card_table_max_age_days * 86400
        for skill_id in sorted(self._skill_ids):
            await asyncio.to_thread(
                self.store.prune,
                skill_id,
                keep=keep,
                older_than=cutoff,
                max_rows=config.card_table_max_rows,
                max_bytes=config.card_table_max_bytes,
            )

    def _pick_thread(self) -> ThreadPoolExecutor:
        self._turn = (self._turn + 1) % len(self._threads)
        return self._threads[self._turn]

    def _evict(self, card_id: str, live: _Live) -> None:
        # Its data is already persisted; detaching runs after anything still queued for it.
        self._driver.cancel(card_id)
        detaching = live.executor.submit(live.card.close)
        self._evicting.add(detaching)
        detaching.add_done_callback(self._evicting.discard)

    async def _run(self, executor: ThreadPoolExecutor, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(executor, fn, *args)


def _normal_path(path: str) -> str:
    """Paths may carry the subpackage prefix (``/skills/coffee/components/x/index``); compare the tail."""
    return path.strip("/")
