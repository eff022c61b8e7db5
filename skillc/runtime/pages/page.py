"""One open page in the debug console: its component VM and its renderer.

    load: page.js runs -> Page({...}) -> this.data from its data -> onLoad(query) -> onShow ->
          onReady -> setData callbacks -> the Render IR of this.data
    tap:  the handlers bound on the tapped node and its ancestors (bind* bubbles, catch* stops)
          with the card event object -> setData -> the Render IR again

Like a card (runtime/cards/card.py) it is synchronous and lives on one thread. Nothing here raises
on what the page does: what goes wrong comes back in the :class:`PageStep` as PAGE diagnostics,
and the page still renders the data it has (a page whose .js fails renders its WXML with ``{}``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from skillc.diagnostics import Diagnostic, DiagnosticSink, Span
from skillc.ir.component import CompiledComponent
from skillc.ir.delivery import chain_to, event_object, reached
from skillc.ir.evaluate import CardRenderer
from skillc.ir.render import RenderDocument, copy_json
from skillc.ir.viewport import Viewport
from skillc.runtime.cards.card import dimensions_for, render_limits
from skillc.runtime.cards.component_host import CardBinding, ComponentHost
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.contracts import ApiCallContext, ConsoleEntry
from skillc.runtime.host.storage import Storage
from skillc.runtime.pages.page_source import PageSource
from skillc.runtime.pages.page_vm import PageVm
from skillc.runtime.sandbox.engine import EngineLimits, JsFault
from skillc.runtime.sandbox.modules import JsError, SkillCode

MAX_CALLBACK_ROUNDS = 8  # setData callbacks that keep calling setData stop after this many rounds
# The hooks the console runs when a page opens, in WeChat's order.
SHOWN_HOOKS = ("onShow", "onReady")


@dataclass(frozen=True)
class PageSetup:
    source: PageSource
    compiled: CompiledComponent
    viewport: Viewport
    context: ApiCallContext
    config: RuntimeConfig
    storage: Storage
    native: bool  # the in-process deadline (the runtime's "interrupt" mode)
    slice_timeout_s: float = 5.0


@dataclass
class PageStep:
    """What one operation on the page did, and the page as it now renders."""

    document: RenderDocument | None = None
    data: dict[str, Any] = field(default_factory=dict)
    handled: list[str] = field(default_factory=list)  # the methods a tap ran
    diagnostics: list[Diagnostic] = field(default_factory=list)
    console: list[ConsoleEntry] = field(default_factory=list)


class OpenPage:
    def __init__(self, setup: PageSetup) -> None:
        self.setup = setup
        self.route = setup.source.route
        self.file = setup.source.path("js")
        binding = CardBinding(
            card_id=f"page:{self.route}",
            component_path=self.route,  # the host names "<route>.js" in what it reports
            api_name="",
            dynamic=False,
            dimensions=dimensions_for(setup.viewport),
            declared_apis=frozenset(),
        )
        self.host = ComponentHost(binding, setup.context, setup.config, setup.storage, app_id=setup.source.app_id)
        self.render_sink = DiagnosticSink()
        self.renderer = CardRenderer(
            setup.compiled, setup.viewport, sink=self.render_sink, limits=render_limits(setup.config)
        )
        self.vm: PageVm | None = None
        self.dead = False  # a fault ended the context: the last render stays, taps do nothing
        self.loaded = False  # Page() ran and the instance exists: taps have methods to call
        self._born = time.monotonic()
        self._render_seen = 0  # the render sink's findings already reported

    # -- operations ------------------------------------------------------------------------------

    def load(self, query: dict[str, str]) -> PageStep:
        step = PageStep()
        data: dict[str, Any] = {}
        try:
            vm = self._start(step, query)
            if vm is not None:
                for hook, arg in (("onLoad", query), *((h, None) for h in SHOWN_HOOKS)):
                    # As in WeChat, a hook that throws is reported and the next one still runs.
                    err = vm.hook(hook, arg)
                    if err is not None:
                        self._js(step, "PAGE003", f"{self.route}.{hook} threw: {_describe(err)}", err)
                    self._drain(step, "PAGE003", f"{self.route}: a setData callback or async {hook}")
                data = vm.snapshot()
                vm.session.collect_as_usual()  # a page lives on between taps, as a card does
        except JsFault as fault:
            self._fault(step, fault)
            data = self._last_data()
        return self._render(step, data)

    def tap(self, node_id: str, kind: str = "tap", detail: Any = None) -> PageStep:
        step = PageStep()
        if self.dead or self.vm is None:
            message = f"{self.route} was stopped; the {kind} on {node_id} did nothing"
            step.diagnostics.append(Diagnostic.make("PAGE016", message, file=self.file))
            return self._render(step, self._last_data())
        if not self.loaded:
            message = f"{self.route} did not load (see its PAGE002); the {kind} on {node_id} did nothing"
            step.diagnostics.append(Diagnostic.make("PAGE002", message, file=self.file))
            return self._render(step, self._last_data())
        chain = chain_to(self.renderer.document.root, node_id) if self.renderer.rendered else None
        if chain is None:
            step.diagnostics.append(
                Diagnostic.make("PAGE005", f"{self.route} has no node {node_id!r} to {kind}", file=self.file)
            )
            return self._render(step, self._last_data())
        target = chain[-1]
        stamp = int((time.monotonic() - self._born) * 1000)
        vm = self.vm
        try:
            for node, binding in reached(chain, kind):
                err, exists = vm.event(binding.handler, event_object(kind, stamp, target, node, binding, detail))
                if not exists:
                    message = f'{self.route} has no method "{binding.handler}" for the {kind} on {node.id}'
                    step.diagnostics.append(Diagnostic.make("PAGE005", message, file=self.file))
                elif err is not None:
                    self._js(step, "PAGE004", f"{self.route}.{binding.handler} threw: {_describe(err)}", err)
                else:
                    step.handled.append(binding.handler)
            self._drain(step, "PAGE004", f"{self.route}: an async handler or setData callback")
            data = vm.snapshot()
        except JsFault as fault:
            self._fault(step, fault)
            data = self._last_data()
        return self._render(step, data)

    def close(self) -> None:
        if self.vm is not None:
            self.vm.close()
            self.vm = None

    # -- steps -----------------------------------------------------------------------------------

    def _start(self, step: PageStep, query: dict[str, str]) -> PageVm | None:
        s = self.setup
        code = SkillCode.of_files(s.source.code, label="the mini-program project", app_id=s.source.app_id)
        vm = PageVm(
            code,
            self.file,
            self.host,
            EngineLimits.of(s.config),
            None,  # a page gets no timers or wx.request here: nothing async to wait for on a loop
            native=s.native,
            dynamic=False,
            slice_timeout_s=s.slice_timeout_s,
            max_data_index=s.config.card_max_data_index,
        )
        self.vm = vm
        if s.source.text("js") is None:
            message = f"{self.route} has no {self.file}; the page renders its WXML with no data"
            step.diagnostics.append(Diagnostic.make("PAGE002", message, file=self.file))
            return None
        err = vm.load() or vm.create_page(self.route, query)
        if err is not None:
            self._js(step, "PAGE002", f"{self.file} failed to load: {_describe(err)}", err)
            return None
        self.loaded = True
        return vm

    def _drain(self, step: PageStep, code: str, what: str) -> bool:
        """Finish pending host calls, run setData callbacks until quiet; whether something threw."""
        assert self.vm is not None
        threw = False
        for _ in range(MAX_CALLBACK_ROUNDS):
            taken = self.vm.take()
            for err in taken.errors:
                threw = True
                self._js(step, code, f"{what} threw: {_describe(err)}", err)
            if not taken.callbacks:
                break
            self.vm.run_callbacks()
        return threw

    def _render(self, step: PageStep, data: dict[str, Any]) -> PageStep:
        if self.vm is not None:
            step.console.extend(self.vm.console())
        _actions, found = self.host.take()  # a page's card-only calls (follow-ups...) are dropped
        step.diagnostics.extend(found)
        try:
            step.document = self.renderer.render(data)
        except Exception as exc:  # a renderer bug on odd data must not take the console down
            message = f"{self.route} could not be rendered: {type(exc).__name__}: {exc}"
            step.diagnostics.append(Diagnostic.make("PAGE003", message, file=self.file))
        rendered = list(self.render_sink)
        step.diagnostics.extend(rendered[self._render_seen :])
        self._render_seen = len(rendered)
        step.data = copy_json(self.renderer.data) if self.renderer.rendered else data
        return step

    def _last_data(self) -> dict[str, Any]:
        return copy_json(self.renderer.data) if self.renderer.rendered else {}

    def _js(self, step: PageStep, code: str, message: str, err: JsError) -> None:
        span = Span.point(err.line, err.column or 1) if err.line else None
        step.diagnostics.append(Diagnostic.make(code, message, file=err.file or self.file, span=span))

    def _fault(self, step: PageStep, fault: JsFault) -> None:
        what = {
            "timeout": f"ran past its {self.setup.slice_timeout_s:g} s deadline",
            "memory": f"ran out of memory (limit {self.setup.config.memory_limit >> 20} MB)",
            "stack": "exceeded the stack size (recursion too deep)",
            "stalled": "waited on a promise that can never settle",
            "error": f"failed: {fault.message}",
        }[fault.kind]
        step.diagnostics.append(Diagnostic.make("PAGE016", f"{self.route} {what} and was stopped", file=self.file))
        self.dead = True


def _describe(err: JsError) -> str:
    where = f" (at {err.file}:{err.line})" if err.file and err.line else ""
    return err.headline + where
