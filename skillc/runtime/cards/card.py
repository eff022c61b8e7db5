"""One card instance: its Component VM, its renderer, and its lifecycle.

    mount:   created -> attached -> Input -> Result -> first Render IR -> (Overflow); or, when
             a card mounted on the same notifications had code that reached nothing outside
             its context, that card's data, and the context built later, if ever
    event:   tap / image load, error -> handler(s) -> setData -> incremental re-render -> patches
    timer:   (scope.dynamic) a due timer's callback -> setData -> patches, like an event
    expire:  Expire notification, timers cleared, marked expired (shows expiredText)
    close:   detached, timers cleared, context released
    rebuild: a fresh context from persisted ``data`` (created and attached run again)

A :class:`Card` is synchronous and must be created, used and closed on one thread (the card
host pins it). Nothing here raises on what a component does: failures come back in the
:class:`Step` as diagnostics, and a failed mount tells the caller to fall back.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from skillc.diagnostics import Diagnostic, DiagnosticSink, Span
from skillc.ir.component import CompiledComponent
from skillc.ir.delivery import chain_to, event_object, reached
from skillc.ir.diff import Insert, Move, Patch, Remove, ReplaceRoot, patches_to_plain
from skillc.ir.evaluate import CardRenderer, RenderLimits
from skillc.ir.render import copy_json
from skillc.ir.viewport import Viewport
from skillc.runtime.cards.card_layout import FirstHeights, HeightCache
from skillc.runtime.cards.card_models import CardView, ComponentAction, Dimensions
from skillc.runtime.cards.card_query import PreviewState, answer_queries, paint_canvas
from skillc.runtime.cards.card_timers import CardTimers, RealClock, TimerSetup
from skillc.runtime.cards.card_updates import CardUpdates, UpdateKind
from skillc.runtime.cards.component_host import CardBinding, ComponentHost
from skillc.runtime.cards.component_vm import ComponentVm, Purity
from skillc.runtime.cards.first_renders import FirstRender, FirstRenders
from skillc.runtime.cards.kept_mounts import KeptMount, KeptMounts, MountKey
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.contracts import ApiCallContext, AtomicApiResult, ConsoleEntry
from skillc.runtime.host.storage import Storage
from skillc.runtime.sandbox.engine import EngineLimits, JsFault
from skillc.runtime.sandbox.modules import JsError, SkillCode

# setData callbacks may call setData again; a card that never settles stops after this many rounds.
MAX_CALLBACK_ROUNDS = 8


def render_limits(config: RuntimeConfig) -> RenderLimits:
    """The renderer's share of the runtime's card limits."""
    return RenderLimits(
        max_nodes=config.card_max_render_nodes,
        max_template_expansions=config.card_max_template_expansions,
        max_for_number=config.card_max_for_number,
        max_data_index=config.card_max_data_index,
    )


def dump_data(data: dict[str, Any]) -> str:
    """A card's data as the JSON the card table stores (and the size limit measures)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _utf8_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def dimensions_for(viewport: Viewport) -> Dimensions:
    """A card is as wide as the screen and between 4:1 and 1:1 in aspect."""
    return Dimensions(min_height=viewport.card_min_height, max_height=viewport.card_max_height, width=viewport.width)


@dataclass(frozen=True)
class CardSetup:
    """What a card needs from its host."""

    binding: CardBinding
    component: CompiledComponent
    context: ApiCallContext
    viewport: Viewport
    code: SkillCode
    config: RuntimeConfig
    storage: Storage
    loop: asyncio.AbstractEventLoop | None
    native: bool
    slice_timeout_s: float
    expired_text: str | None
    timing: TimerSetup | None = None  # the card host's clock for a dynamic card's timers
    first_heights: FirstHeights | None = None  # the host's first-render heights, shared by its cards
    first_renders: FirstRenders | None = None  # the host's first-render documents, shared by its cards
    kept_mounts: KeptMounts | None = None  # the host's mounts that need no context, shared by its cards


@dataclass(frozen=True)
class Replay:
    """How a card that started without a context builds one: its mount, run again."""

    input_text: str  # the Input and Result notifications' payloads, as JSON
    result_text: str
    kept: KeptMount


@dataclass
class Step:
    """What one operation on a card produced."""

    failure: str | None = None  # set when the card cannot be shown (mount) or has died
    handled: list[str] = field(default_factory=list)
    patches: list[Patch] = field(default_factory=list)
    actions: list[ComponentAction] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    console: list[ConsoleEntry] = field(default_factory=list)
    data_changed: bool = False
    after: str | None = None  # a dynamic card's update cursor before and after these patches
    cursor: str | None = None


class Card:
    def __init__(self, setup: CardSetup) -> None:
        self.setup = setup
        self.binding = setup.binding
        self.card_id = setup.binding.card_id
        self.expired = False
        self.dead = False
        self.content_height = 0.0
        self._overflow_reported: float | None = None
        self._heights = HeightCache(setup.viewport.width)
        self._born = time.monotonic()
        timing = setup.timing or TimerSetup(RealClock())
        self.timers = CardTimers(
            timing.clock,
            min_interval_ms=setup.config.card_timer_min_interval_ms,
            max_timers=setup.config.card_max_timers,
            order=timing.order,
            hidden=timing.hidden,
        )
        self.updates = CardUpdates(timing.stream) if setup.binding.dynamic else None
        self.host = ComponentHost(
            setup.binding, setup.context, setup.config, setup.storage, self.timers, app_id=setup.code.app_id
        )
        self.render_sink = DiagnosticSink()
        self._renderer = CardRenderer(
            setup.component, setup.viewport, sink=self.render_sink, limits=render_limits(setup.config)
        )
        # A first render taken from the host's memo (first_renders.py): its document, and the data
        # the renderer has not rendered yet; None once the renderer holds the card's state.
        self._first: FirstRender | None = None
        self._unrendered: dict[str, Any] | None = None
        self.vm: ComponentVm | None = None
        # A card mounted from a kept mount has no context until its code is needed (kept_mounts.py).
        self._replay: Replay | None = None
        # The last data that rendered within the limits, as JSON: what the card table stores and
        # what a card that goes over a limit goes back to. None until the first render succeeds.
        self.data_json: str | None = None

    @property
    def renderer(self) -> CardRenderer:
        """The card's renderer, its state built first when the first render came from the memo."""
        if self._unrendered is not None:
            data, self._unrendered, self._first = self._unrendered, None, None
            # What this render reports, the kept render already reported for this card.
            self._renderer.sink = DiagnosticSink()
            try:
                self._renderer.render(data)
            finally:
                self._renderer.sink = self.render_sink
        return self._renderer

    @renderer.setter
    def renderer(self, renderer: CardRenderer) -> None:
        self._renderer, self._unrendered, self._first = renderer, None, None

    @property
    def viewport(self) -> Viewport:
        return self._renderer.viewport

    # -- lifecycle -------------------------------------------------------------------------------

    def mount(self, result: AtomicApiResult, arguments: dict[str, Any]) -> Step:
        step = Step()
        payload = {
            "result": {
                "isError": result.is_error,
                "content": [b.model_dump(exclude_none=True) for b in result.content],
                "structuredContent": result.structured_content,
                "_meta": result.meta,
            }
        }
        input_text = json.dumps({"input": arguments}, ensure_ascii=False)
        result_text = json.dumps(payload, ensure_ascii=False)
        key: MountKey = (self.binding.component_path, self.setup.viewport, input_text, result_text)
        mounts = self.setup.kept_mounts
        kept = mounts.get(key) if mounts is not None else None
        if kept is not None:
            return self._mount_kept(step, Replay(input_text, result_text, kept))
        purity = None
        try:
            vm = self._start(step)
            if vm is None:
                return self._finish(step)
            if not self._run_mount(vm, step, input_text, result_text):
                return self._finish(step)
            text = vm.snapshot_text()
            if self._too_big(step, _utf8_size(text), "its data"):
                return self._finish(step)
            loaded = json.loads(text)
            if not self._first_render(step, loaded if isinstance(loaded, dict) else {}, text):
                return self._finish(step)
            self._drain(step)
            if step.failure is None:
                self._check_overflow(step)
            if mounts is not None and step.failure is None:
                purity = vm.purity()
            vm.session.collect_as_usual()
        except JsFault as fault:
            self._fault(step, fault)
        step = self._finish(step)
        if mounts is not None and purity is not None and self._repeatable(purity, step):
            assert self.data_json is not None  # committed by _finish: the mount rendered within its limits
            mounts.keep(key, KeptMount(text, self.data_json, purity.listening))
        return step

    def _repeatable(self, purity: Purity, step: Step) -> bool:
        """Whether a later card may take this mount's data instead of running it: its code reached
        nothing outside the context (no action, no console line either: those are host calls), the
        first render stands as drawn (no setData after it, no Overflow) and closing runs nothing."""
        if not purity.pure or purity.detached or step.failure is not None:
            return False
        return not step.patches and not step.data_changed and self._overflow_reported is None

    def _run_mount(self, vm: ComponentVm, step: Step, input_text: str, result_text: str) -> bool:
        """The mount's code, in WeChat's order: the instance is created and attached, then the
        notifications arrive (so a card may set fallbacks in attached and override them from
        Result). False, with the failure in ``step``, when the component threw."""
        phases: list[tuple[str, str, Callable[[], JsError | None]]] = [
            ("CMPVM002", "lifetimes.created", vm.create),
            ("CMPVM002", "lifetimes.attached", lambda: vm.lifetime("attached")),
            ("CMPVM003", "its Input notification handler", lambda: vm.notify_text("Input", input_text)),
            ("CMPVM003", "its Result notification handler", lambda: vm.notify_text("Result", result_text)),
        ]
        for code, where, run in phases:
            err = run()
            if err is None:
                late = vm.take().errors  # a rejected async handler counts as throwing
                err = late[0] if late else None
            if err is not None:
                self._fail(step, code, f"{self._name} threw in {where}: {self._describe(err)}", err)
                return False
        return True

    def _mount_kept(self, step: Step, replay: Replay) -> Step:
        """A mount from a kept one: its data and first render, and no context yet."""
        kept = replay.kept
        loaded = json.loads(kept.data_text)
        if self._first_render(step, loaded if isinstance(loaded, dict) else {}, kept.data_text):
            self._replay = replay
            self.data_json = kept.data_json
        return self._finish(step)

    def _awake(self, step: Step) -> ComponentVm | None:
        """The card's context: built now, by running its mount again, if the card started without
        one. None, with the failure in ``step``, when that fails (the card is then dead)."""
        if self.vm is not None or self._replay is None:
            return self.vm
        replay, self._replay = self._replay, None
        vm = self._start(step)
        if vm is None:
            return None
        if not self._run_mount(vm, step, replay.input_text, replay.result_text):
            self.dead = True
            return None
        if vm.snapshot_text() != replay.kept.data_text or self.data_json != replay.kept.data_json:
            # Another instance's data came in since (refresh), or the mount did not repeat itself:
            # the context takes the data the card shows, as a rebuilt card's does.
            vm.restore(self.data)
        self.host.take()  # a kept mount reached no host: nothing to report twice
        vm.session.collect_as_usual()
        return vm

    @property
    def closed(self) -> bool:
        return self.dead or (self.vm is None and self._replay is None)

    def rebuild(self, data: dict[str, Any], expired: bool) -> Step:
        """A fresh context from persisted data: index.js, created and attached run, then data is restored."""
        step = Step()
        self.expired = expired
        try:
            vm = self._start(step)
            if vm is None:
                return self._finish(step)
            for phase in ("created", "attached"):
                err = vm.create() if phase == "created" else vm.lifetime("attached")
                if err is not None:
                    message = f"{self._name} threw in lifetimes.{phase} while rebuilding: {self._describe(err)}"
                    step.diagnostics.append(self._js_diag("CMPVM002", message, err))
            vm.take()
            vm.restore(data)
            if expired:  # created / attached may have set timers again; an expired card runs none
                vm.stop_timers()
                self.timers.clear_all()
            if not self._first_render(step, data):
                return self._finish(step)
            self.data_json = dump_data(self.renderer.data)
            step.diagnostics.append(
                Diagnostic.make(
                    "CMPVM014",
                    f"card {self.card_id} ({self._name}) was rebuilt from its persisted data",
                    file=self._file,
                )
            )
            vm.session.collect_as_usual()
        except JsFault as fault:
            self._fault(step, fault)
        return self._finish(step)

    def refresh(self, data: dict[str, Any]) -> Step:
        """Bring this live copy up to ``data``, which another instance wrote: restored into the
        running context, so its timers, closures and fields outside ``data`` go on (a rebuild
        would lose a timer set in a Result handler), then rendered in full with no patches (the
        view has what that instance sent). Fails only when the copy is closed or cannot render."""
        step = Step()
        if self.closed:
            step.failure = f"card {self.card_id} is closed"
            return step
        try:
            if self.vm is not None:  # one still without a context takes the data when it builds one
                self.vm.restore(data)
            if not self._first_render(step, data):
                return self._finish(step)
            self.data_json = dump_data(self.renderer.data)
            message = f"card {self.card_id} ({self._name}) went on with the data another instance wrote"
            step.diagnostics.append(Diagnostic.make("CMPVM051", message, file=self._file))
        except JsFault as fault:
            self._fault(step, fault)
        return self._finish(step)

    def event(self, node_id: str, kind: str, detail: Any) -> Step:
        step = Step()
        if self.closed:
            self._warn(step, f"card {self.card_id} is closed; the {kind} on {node_id} was ignored")
            return step
        if self.expired:
            self._warn(step, f"card {self.card_id} has expired; the {kind} on {node_id} was ignored")
            return step
        chain = chain_to(self.renderer.document.root, node_id)
        if chain is None:
            self._warn(step, f"card {self.card_id} has no node {node_id!r}")
            return step
        target = chain[-1]
        stamp = int((time.monotonic() - self._born) * 1000)
        try:
            vm = self._awake(step)
            if vm is None:
                return self._finish(step)
            for node, binding in reached(chain, kind):
                err, exists = vm.event(binding.handler, event_object(kind, stamp, target, node, binding, detail))
                if not exists:
                    message = f'{self._name} has no method "{binding.handler}" for the {kind} on {node.id}'
                    step.diagnostics.append(Diagnostic.make("CMPVM005", message, file=self._file))
                elif err is not None:
                    message = f"{self._name}.{binding.handler} threw: {self._describe(err)}"
                    step.diagnostics.append(self._js_diag("CMPVM004", message, err))
                else:
                    step.handled.append(binding.handler)
            self._drain(step)
            self._check_overflow(step)
        except JsFault as fault:
            self._fault(step, fault)
        return self._finish(step)

    def expire(self) -> Step:
        step = Step()
        if self.expired or self.closed:
            self.expired = True
            return step
        self.expired = True
        if self._replay is not None and "Expire" not in self._replay.kept.listening:
            return step  # no context, no timers, no handler: expiring it runs nothing
        try:
            vm = self._awake(step)
            if vm is None:
                return self._finish(step)
            err = vm.notify("Expire", {})
            if err is not None:
                message = f"{self._name} threw in its Expire notification handler: {self._describe(err)}"
                step.diagnostics.append(self._js_diag("CMPVM004", message, err))
            vm.stop_timers()
            self.timers.clear_all()
            self._drain(step)
        except JsFault as fault:
            self._fault(step, fault)
        return self._finish(step)

    def fire_due(self) -> list[tuple[int, float, Step]]:
        """Run the callbacks of the timers due now (scope.dynamic), each in a slice of its own, in
        the order they fall due: ``(timer id, when, what it did)`` for each. A timer one of these
        callbacks sets waits for the next pass, so a pass always ends."""
        fired: list[tuple[int, float, Step]] = []
        if self.dead or self.vm is None or self.expired:
            return fired
        for timer in self.timers.due(self.timers.mark()):
            if self.dead or self.expired or self.vm is None:
                break
            if not self.timers.take(timer):  # cleared by an earlier callback of this pass
                continue
            fired.append((timer.id, self.timers.clock.now_ms(), self._fire(timer.id)))
        return fired

    def _fire(self, timer_id: int) -> Step:
        step = Step()
        assert self.vm is not None
        self.timers.firing = True
        try:
            err = self.vm.fire_timer(timer_id)
            if err is not None:
                message = f"{self._name}: a timer callback threw: {self._describe(err)}"
                step.diagnostics.append(self._js_diag("CMPVM004", message, err))
            self._drain(step)
            self._check_overflow(step)
        except JsFault as fault:
            self._fault(step, fault)
        finally:
            self.timers.firing = False
        return self._finish(step)

    def set_hidden(self, hidden: bool) -> None:
        """The host shows or hides the card: its timers pause while hidden and resume with the
        time they had left."""
        if hidden:
            self.timers.hide()
        else:
            self.timers.show()

    def record(self, kind: UpdateKind, step: Step, timer_id: int | None = None) -> None:
        """Put what ``step`` changed in a dynamic card's update stream (card_updates.py)."""
        if self.updates is None:
            return
        if step.patches or (kind == "timer" and step.actions):
            step.after = self.updates.append(kind, patches_to_plain(step.patches), step.actions, timer_id)
        else:
            step.after = self.updates.cursor
        step.cursor = self.updates.cursor

    def restyle(self, viewport: Viewport) -> Step:
        """Render the card's current data for another colour scheme or width (the host's theme
        changed, its container is narrower): one replaceRoot, later patches diff against it.
        Nothing runs in the component: WeChat resolves ``@media`` without telling the card."""
        step = Step()
        if self.closed or viewport == self.viewport:
            return step
        renderer = CardRenderer(
            self.setup.component, viewport, sink=self.render_sink, limits=render_limits(self.setup.config)
        )
        renderer.drawings = self.renderer.drawings  # what the card painted stays on its canvases
        try:
            document = renderer.render(self.renderer.data)
        except Exception as exc:  # keep the card as it was rather than lose it to a renderer bug
            self._warn(step, f"card {self.card_id} could not be restyled: {type(exc).__name__}: {exc}")
            return step
        if renderer.exceeded is not None:
            return step
        self.renderer = renderer
        self._heights = HeightCache(viewport.width)
        self.content_height = self._heights.measure(document.root)
        step.patches.append(ReplaceRoot(document.root))
        return step

    def close(self) -> list[Diagnostic]:
        """detached, then release the context; returns what the detached lifetime reported."""
        diags: list[Diagnostic] = []
        vm, self.vm, self._replay = self.vm, None, None
        if vm is None:  # closed before, or never needed a context (a kept mount has no detached lifetime)
            self.dead = True
            return diags
        vm.session.collect_late()  # the context is released next: a collection now would be wasted
        if not self.dead:
            try:
                err = vm.lifetime("detached")
                if err is not None:
                    message = f"{self._name} threw in lifetimes.detached: {self._describe(err)}"
                    diags.append(self._js_diag("CMPVM002", message, err))
                vm.stop_timers()
            except JsFault:
                pass  # the context is being released anyway
        self.timers.clear_all()
        self.dead = True
        vm.close()
        return diags

    def view(self, session_id: str) -> CardView:
        """A snapshot: later events do not change it. A card that shows a kept first render
        shares its document (first_renders.py): later events draw into the card's own state."""
        first = self._first
        view = CardView(
            card_id=self.card_id,
            component_path=self.binding.component_path,
            api_name=self.binding.api_name,
            session_id=session_id,
            document=first.document if first is not None else self.renderer.document.clone(),
            data=copy_json(self.data),
            expired=self.expired,
            expired_text=self.setup.expired_text if self.expired else None,
            dimensions=self.binding.dimensions,
            content_height=self.content_height,
            pending_timers=self.timers.count if self.vm is not None else 0,
            cursor=self.updates.cursor if self.updates is not None else None,
        )
        if first is not None:  # the kept document itself: its wire form and size were made when it was kept
            view.share_wire(first.plain, first.wire_bytes)
        return view

    @property
    def data(self) -> dict[str, Any]:
        return self._unrendered if self._unrendered is not None else self.renderer.data

    # -- steps -----------------------------------------------------------------------------------

    def _start(self, step: Step) -> ComponentVm | None:
        s = self.setup
        main = self.binding.component_path + ".js"
        vm = ComponentVm(
            s.code,
            main,
            self.host,
            EngineLimits.of(s.config),
            s.loop,
            native=s.native,
            dynamic=self.binding.dynamic,
            slice_timeout_s=s.slice_timeout_s,
            max_data_index=s.config.card_max_data_index,
        )
        self.vm = vm
        err = vm.load()
        if err is not None:
            self._fail(step, "CMPVM001", f"{main} failed to load: {self._describe(err)}", err)
            # No instance exists, so no lifetime may run on it: close() only releases the context
            # (a detached here would fail on the missing Component() and bury the real error).
            self.dead = True
            return None
        return vm

    def _first_render(self, step: Step, data: dict[str, Any], data_text: str | None = None) -> bool:
        """``data_text``: ``data`` as the VM gave it, JSON; with it the height, and the document
        itself, may come from a card mounted on the same data."""
        self._unrendered = self._first = None
        key = (self.binding.component_path, self.setup.viewport, data_text or "")
        renders = self.setup.first_renders if data_text is not None else None
        kept = renders.get(key) if renders is not None else None
        if kept is not None:
            self._first, self._unrendered = kept, data
            self.render_sink.extend(kept.diagnostics)
            self.content_height = kept.height
            return True
        try:
            self._renderer.render(data)
        except Exception as exc:  # a renderer bug on odd data must become a fallback, not a crash
            self._fail(step, "CMPVM009", f"{self._name} could not be rendered: {type(exc).__name__}: {exc}", None)
            return False
        exceeded = self._renderer.exceeded
        if exceeded is not None:  # its diagnostic (RND005-RND008) is in the render sink
            step.failure = f"{self._name} could not be rendered: {exceeded.message}"
            return False
        memo = self.setup.first_heights if data_text is not None else None
        height = memo.get(key) if memo is not None else None
        if height is None:
            height = self._heights.measure(self._renderer.document.root)
            if memo is not None:
                memo.put(key, height)
        elif renders is not None:  # the second card on this content: from the third on, no render
            renders.keep(key, self._renderer.document, height, list(self.render_sink))
        self.content_height = height
        return True

    def _too_big(self, step: Step, size: int, what: str) -> bool:
        """Data over card_max_data_bytes: a new card falls back, a mounted one goes back to its last data."""
        limit = self.setup.config.card_max_data_bytes
        if size <= limit:
            return False
        then = "the card falls back" if self.data_json is None else "the card keeps its last data and render"
        message = f"{self._name}: {what} is {size} bytes as JSON, more than the limit of {limit} bytes; {then}"
        step.diagnostics.append(Diagnostic.make("CMPVM016", message, file=self._file))
        self._roll_back(step, message)
        return True

    def _roll_back(self, step: Step, message: str) -> None:
        """Back to the last data that rendered within the limits (a new card has none: it fails)."""
        if self.data_json is None:
            step.failure = message
            return
        assert self.vm is not None
        data = json.loads(self.data_json)
        self.vm.restore(data)
        doc = self.renderer.render(data)
        step.patches = [ReplaceRoot(doc.root)]
        step.data_changed = False
        self.content_height = self._heights.measure(doc.root)

    def _drain(self, step: Step) -> None:
        """Take setData changes, re-render incrementally, run setData callbacks; repeat until quiet."""
        assert self.vm is not None
        for _ in range(MAX_CALLBACK_ROUNDS):
            taken = self.vm.take()
            for err in taken.errors:
                message = f"{self._name}: an async handler or setData callback threw: {self._describe(err)}"
                step.diagnostics.append(self._js_diag("CMPVM004", message, err))
            if taken.changes:
                step.data_changed = True
                if self._too_big(step, taken.nbytes, "a setData"):
                    return
                step.patches.extend(self._update(taken.changes, step))
                exceeded = self.renderer.exceeded
                if exceeded is not None:  # its diagnostic is in the render sink
                    self._roll_back(step, f"{self._name} could not be rendered: {exceeded.message}")
                    return
                if step.failure is not None:
                    return
            queries = self._previews(taken.previews, step)
            if not taken.callbacks and not queries:
                return
            if taken.callbacks:
                self.vm.run_callbacks()

    def _previews(self, previews: PreviewState | None, step: Step) -> bool:
        """Paint the canvases drawn on and answer the SelectorQueries waiting for this render;
        whether any query was answered (its callbacks may have changed data or drawn)."""
        if previews is None:
            return False
        for node_id, record in previews.canvases.items():
            drawing, diags = paint_canvas(node_id, record, self._file)
            step.diagnostics.extend(diags)
            if drawing is not None:
                step.patches.extend(self.renderer.set_drawing(node_id, drawing))
        if not previews.queries or not self.renderer.rendered:
            return False
        answers, diags = answer_queries(
            previews.queries, self.renderer.document.root, self.renderer.viewport, self._file
        )
        step.diagnostics.extend(diags)
        assert self.vm is not None
        err = self.vm.answer_queries(answers)
        if err is not None:
            message = f"{self._name}: a SelectorQuery callback threw: {self._describe(err)}"
            step.diagnostics.append(self._js_diag("CMPVM004", message, err))
        return True

    def _update(self, changes: dict[str, Any], step: Step) -> list[Patch]:
        try:
            return self.renderer.update(changes)
        except Exception as exc:  # resynchronise from the component's own data with a full render
            message = f"{self._name}: incremental render failed ({type(exc).__name__}: {exc}); re-rendered in full"
            step.diagnostics.append(Diagnostic.make("CMPVM009", message, file=self._file))
            assert self.vm is not None
            try:
                doc = self.renderer.render(self.vm.snapshot())
            except Exception:
                return []
            return [ReplaceRoot(doc.root)]

    def _check_overflow(self, step: Step) -> None:
        assert self.vm is not None
        if any(isinstance(p, ReplaceRoot) for p in step.patches):
            height = self._heights.measure(self.renderer.document.root)
        elif step.patches:
            height = self._heights.measure(self.renderer.document.root, _touched(step.patches))
        else:
            height = self.content_height
        self.content_height = height
        limit = self.binding.dimensions.max_height
        if height <= limit or self._overflow_reported == height:
            return
        self._overflow_reported = height
        step.diagnostics.append(
            Diagnostic.make(
                "CMPVM010",
                f"{self._name} renders about {height:.0f}px tall, more than maxHeight {limit}px; the rest is clipped",
                file=self._file,
            )
        )
        payload = {"contentHeight": height, "overflowHeight": height - limit, "maxHeight": limit}
        err = self.vm.notify("Overflow", payload)
        if err is not None:
            message = f"{self._name} threw in its Overflow notification handler: {self._describe(err)}"
            step.diagnostics.append(self._js_diag("CMPVM004", message, err))
        self._drain(step)

    def _finish(self, step: Step) -> Step:
        if step.failure is None and not self.dead and self.vm is not None and (step.data_changed or not self.data_json):
            self._commit(step)
        actions, diags = self.host.take()
        step.actions.extend(actions)
        step.diagnostics = diags + step.diagnostics + list(self.render_sink)
        self.render_sink = DiagnosticSink()
        self._renderer.sink = self.render_sink
        if self.vm is not None:
            step.console.extend(self.vm.console())
        return step

    def _commit(self, step: Step) -> None:
        """Keep the data as the last good JSON, unless it has grown over the size limit."""
        text = dump_data(self.data)
        if not self._too_big(step, _utf8_size(text), "its data"):
            self.data_json = text

    def _fail(self, step: Step, code: str, message: str, err: JsError | None) -> None:
        step.failure = message
        step.diagnostics.append(self._js_diag(code, message, err) if err else Diagnostic.make(code, message))

    def _fault(self, step: Step, fault: JsFault) -> None:
        what = {
            "timeout": f"ran past its {self.setup.slice_timeout_s:g} s deadline",
            "memory": f"ran out of memory (limit {self.setup.config.memory_limit >> 20} MB)",
            "stack": "exceeded the stack size (recursion too deep)",
            "stalled": "waited on a promise that can never settle",
            "error": f"failed: {fault.message}",
        }[fault.kind]
        message = f"{self._name} {what} and was stopped"
        step.failure = message
        step.diagnostics.append(Diagnostic.make("CMPVM011", message, file=self._file))
        self.dead = True

    def _warn(self, step: Step, message: str) -> None:
        step.diagnostics.append(Diagnostic.make("CMPVM012", message))

    def _js_diag(self, code: str, message: str, err: JsError | None) -> Diagnostic:
        span = Span.point(err.line, err.column or 1) if err is not None and err.line else None
        return Diagnostic.make(code, message, file=(err.file if err and err.file else self._file), span=span)

    @staticmethod
    def _describe(err: JsError) -> str:
        where = f" (at {err.file}:{err.line})" if err.file and err.line else ""
        return err.headline + where

    @property
    def _name(self) -> str:
        return self.binding.component_path

    @property
    def _file(self) -> str:
        return self.binding.component_path + ".js"


def _touched(patches: list[Patch]) -> set[str]:
    ids: set[str] = set()
    for p in patches:
        if isinstance(p, Insert):
            ids.update((p.parent, p.node.id))
        elif isinstance(p, Remove | Move):
            ids.update((p.parent, p.id))
        elif not isinstance(p, ReplaceRoot):
            ids.add(p.id)
    return ids
