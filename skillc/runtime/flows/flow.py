"""Scripted conversations (``skillc run SKILL --script FLOW.json``): API calls, taps, follow-ups, expiry.

A flow is JSON::

    {"steps": [
      {"call": "searchDrinks", "arguments": {"keyword": "latte"}},
      {"tap": {"handler": "onSelect", "dataset": {"id": "d02"}}},
      {"follow": true, "approve": true, "payment": "fail"},
      {"expire": "card-1"},
      {"wait": 3000},
      {"visibility": "hidden"}
    ]}

A tap picks its node by handler and dataset (a subset match) on a card (``card``: a card id or an
API name; the newest card by default). ``follow`` runs the api/call blocks of the latest follow-up
message through the whole call chain. ``payment`` (on a call or follow step) is how the test
payment provider answers that step's ``wx.requestPayment`` calls: ``success`` (the default),
``fail`` or ``cancel``. ``wait`` moves the replay's virtual clock on (ms) and fires the dynamic
cards' timers that fall due, in order; ``visibility`` hides or shows every card (or one, ``card``),
pausing a hidden card's timers. Each step becomes a :class:`StepRecord`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from skillc.diagnostics import Diagnostic, Severity
from skillc.ir.diff import Patch, patches_to_plain
from skillc.ir.events import EventName
from skillc.ir.render import RenderNode
from skillc.runtime.api.result import Handoff, handoff_of
from skillc.runtime.cards.card_host import CardHost
from skillc.runtime.cards.card_models import (
    ApiCallAction,
    CallOutcome,
    CardView,
    ComponentAction,
    EventOutcome,
    FallbackRequest,
    SendFollowUpMessage,
    TimerFiring,
)
from skillc.runtime.cards.card_timers import VirtualClock
from skillc.runtime.contracts import ApiCallContext, ApiCallOutcome, ConsoleEntry
from skillc.runtime.host.payment import PaymentOutcome, ScriptedPaymentProvider


class _Step(BaseModel):
    model_config = ConfigDict(extra="forbid")

    note: str | None = None


class CallStep(_Step):
    call: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    approve: bool = False
    payment: PaymentOutcome | None = Field(default=None, description="the outcome of this step's wx.requestPayment")


class NodeSelector(BaseModel):
    model_config = ConfigDict(extra="forbid")

    handler: str | None = None
    dataset: dict[str, Any] = Field(default_factory=dict)
    node: str | None = Field(default=None, description="a Render IR node id, instead of handler/dataset")
    card: str | None = Field(default=None, description="a card id or an API name; the newest card by default")


class TapStep(_Step):
    tap: NodeSelector
    event: EventName = "tap"
    detail: Any = None


class FollowStep(_Step):
    follow: Literal[True]
    approve: bool = False
    payment: PaymentOutcome | None = Field(default=None, description="the outcome of this step's wx.requestPayment")


class ExpireStep(_Step):
    expire: str = Field(description="a card id or an API name")


class WaitStep(_Step):
    wait: float = Field(gt=0, le=86_400_000, description="ms the virtual clock moves on; due timers fire")


class VisibilityStep(_Step):
    visibility: Literal["hidden", "visible"]
    card: str | None = Field(default=None, description="a card id or an API name; every card by default")


FlowStep = CallStep | TapStep | FollowStep | ExpireStep | WaitStep | VisibilityStep


class FlowScript(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str | None = None
    steps: list[FlowStep]


class StepRecord(BaseModel):
    """What one step did. ``fallback_card`` is the generic card the caller built (e.g. CardSpec)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: int
    kind: Literal["call", "tap", "follow", "expire", "wait", "visibility"]
    title: str
    api: list[ApiCallOutcome] = Field(default_factory=list)
    cards: list[CardView] = Field(default_factory=list)
    fallbacks: list[FallbackRequest] = Field(default_factory=list)
    fallback_cards: list[dict[str, Any]] = Field(default_factory=list)
    handled: list[str] = Field(default_factory=list)
    patches: list[Patch] = Field(default_factory=list)
    actions: list[ComponentAction] = Field(default_factory=list)
    handoffs: list[Handoff] = Field(default_factory=list, description="pages the APIs asked WeChat to open")
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    # The gate's findings in a card this step drew, each once per flow: reported, never a failure.
    findings: list[Diagnostic] = Field(default_factory=list)
    timers: list[TimerFiring] = Field(default_factory=list, description="the timer callbacks a wait ran")
    visibility: list[str] = Field(default_factory=list, description="the dynamic cards a visibility step reached")
    # The card VM's console.log on mount, taps and timers (the API VM's is in each ``api`` outcome).
    console: list[ConsoleEntry] = Field(default_factory=list)
    failed: bool = False

    def wire(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "kind": self.kind,
            "title": self.title,
            "failed": self.failed,
            "api": [a.wire() for a in self.api],
            "cards": [c.wire() for c in self.cards],
            "fallbacks": [f.wire() for f in self.fallbacks],
            "fallbackCards": self.fallback_cards,
            "handled": self.handled,
            "patches": patches_to_plain(self.patches),
            "actions": [a.wire() for a in self.actions],
            "diagnostics": [d.model_dump(mode="json", exclude_none=True) for d in self.diagnostics],
            **(
                {"findings": [d.model_dump(mode="json", exclude_none=True) for d in self.findings]}
                if self.findings
                else {}
            ),
            # only when there is one: a flow without handoffs keeps the form it always had
            **({"handoffs": [h.wire() for h in self.handoffs]} if self.handoffs else {}),
            **({"console": [c.wire() for c in self.console]} if self.console else {}),
            **({"timers": [t.wire() for t in self.timers]} if self.kind == "wait" else {}),
            **({"visibility": self.visibility} if self.kind == "visibility" else {}),
        }


FallbackBuilder = Callable[[FallbackRequest], dict[str, Any]]


class FlowRunner:
    """Replays a flow on a card host, one step at a time."""

    def __init__(self, host: CardHost, context: ApiCallContext, fallback: FallbackBuilder | None = None) -> None:
        self.host = host
        self.context = context
        self.fallback = fallback
        self._cards: list[tuple[str, str]] = []  # (card id, api name), oldest first
        self._findings_seen: set[Diagnostic] = set()
        self._follow_up: SendFollowUpMessage | ApiCallAction | None = None

    async def run(self, script: FlowScript) -> list[StepRecord]:
        return [await self.step(i + 1, s) for i, s in enumerate(script.steps)]

    async def step(self, index: int, step: FlowStep) -> StepRecord:
        payment = step.payment if isinstance(step, (CallStep, FollowStep)) else None
        if payment is None:
            return await self._step(index, step)
        provider = self.host.runtime.payments
        if not isinstance(provider, ScriptedPaymentProvider):
            record = await self._step(index, step)
            message = f'payment: "{payment}" was not applied: {provider.name} cannot be scripted'
            record.diagnostics.append(Diagnostic.make("RUN104", message))
            return record
        before = provider.script(payment)
        try:
            record = await self._step(index, step)
        finally:
            paid = provider.script(None) - before
        if paid == 0:
            message = f'payment: "{payment}" was not applied: no wx.requestPayment ran during this step'
            record.diagnostics.append(Diagnostic.make("RUN104", message))
        return record

    async def _step(self, index: int, step: FlowStep) -> StepRecord:
        if isinstance(step, CallStep):
            title = f"call {step.call}"
            record = StepRecord(index=index, kind="call", title=title)
            self._take_call(record, await self.host.call(step.call, step.arguments, self.context, approve=step.approve))
        elif isinstance(step, TapStep):
            record = await self._tap(index, step)
        elif isinstance(step, FollowStep):
            record = StepRecord(index=index, kind="follow", title="follow the last follow-up message")
            if self._follow_up is None:
                self._fail(record, "there is no follow-up message with an api/call to follow")
            else:
                action = self._follow_up
                self._follow_up = None
                for called in await self.host.follow(action, self.context, approve=step.approve):
                    record.title = f"follow api/call {called.api.api_name}"
                    self._take_call(record, called)
        elif isinstance(step, WaitStep):
            record = await self._wait(index, step)
        elif isinstance(step, VisibilityStep):
            record = await self._visibility(index, step)
        else:
            record = StepRecord(index=index, kind="expire", title=f"expire {step.expire}")
            card_id = self._card(step.expire)
            if card_id is None:
                self._fail(record, f"no card matches {step.expire!r}")
            else:
                for outcome in await self.host.expire([card_id]):
                    self._take_event(record, outcome)
        record.failed = record.failed or any(d.severity is Severity.ERROR for d in record.diagnostics)
        return record

    async def _wait(self, index: int, step: WaitStep) -> StepRecord:
        start = self.host.clock.now_ms()
        title = f"wait {step.wait:g} ms ({start:g} -> {start + step.wait:g} ms)"
        record = StepRecord(index=index, kind="wait", title=title)
        if not isinstance(self.host.clock, VirtualClock):
            self._fail(record, "a wait step needs a card host on a virtual clock (skillc run builds one)")
            return record
        for firing in await self.host.advance(step.wait):
            record.timers.append(firing)
            self._take_event(record, firing.outcome, patches=False)
        return record

    async def _visibility(self, index: int, step: VisibilityStep) -> StepRecord:
        which = "every card" if step.card is None else step.card
        record = StepRecord(index=index, kind="visibility", title=f"visibility {step.visibility} ({which})")
        ids: list[str] | None = None
        if step.card is not None:
            card_id = self._card(step.card)
            if card_id is None:
                self._fail(record, f"no card matches {step.card!r}")
                return record
            ids = [card_id]
        record.visibility, diags = await self.host.set_visibility(step.visibility == "hidden", ids)
        record.diagnostics += diags
        return record

    async def _tap(self, index: int, step: TapStep) -> StepRecord:
        sel = step.tap
        what = sel.node or f"{sel.handler or '*'}{_dataset_text(sel.dataset)}"
        record = StepRecord(index=index, kind="tap", title=f"{step.event} {what}")
        card_id = self._card(sel.card)
        view = await self.host.card(card_id) if card_id else None
        if card_id is None or view is None:
            self._fail(record, f"no card matches {sel.card or 'the newest card'!r}")
            return record
        node = _select(view.document.root, sel, step.event)
        if node is None:
            self._fail(record, f"card {card_id} has no node with a {step.event} handler matching {what}")
            return record
        record.title = f"{step.event} {what} on {card_id} (node {node.id})"
        self._take_event(record, await self.host.event(card_id, node.id, step.event, step.detail))
        return record

    def _take_call(self, record: StepRecord, outcome: CallOutcome) -> None:
        record.api.append(outcome.api)
        handoff = handoff_of(outcome.api.result)
        if handoff is not None:
            record.handoffs.append(handoff)
        record.diagnostics += outcome.api.diagnostics + outcome.diagnostics
        record.console += outcome.console
        for finding in outcome.findings:
            if finding not in self._findings_seen:
                self._findings_seen.add(finding)
                record.findings.append(finding)
        record.actions += outcome.actions
        if outcome.card is not None:
            record.cards.append(outcome.card)
            self._cards.append((outcome.card.card_id, outcome.api.api_name))
        if outcome.fallback is not None:
            record.fallbacks.append(outcome.fallback)
            if self.fallback is not None:
                record.fallback_cards.append(self.fallback(outcome.fallback))
        self._remember(outcome.actions)

    def _take_event(self, record: StepRecord, outcome: EventOutcome, *, patches: bool = True) -> None:
        record.handled += outcome.handled
        if patches:  # a wait's patches and console stay with the timer that made them (record.timers)
            record.patches += outcome.patches
            record.console += outcome.console
        record.actions += outcome.actions
        record.diagnostics += outcome.diagnostics
        self._remember(outcome.actions)

    def _remember(self, actions: list[ComponentAction]) -> None:
        for action in actions:
            if (isinstance(action, SendFollowUpMessage) and action.api_calls()) or isinstance(action, ApiCallAction):
                self._follow_up = action

    def _card(self, ref: str | None) -> str | None:
        if ref is None:
            return self._cards[-1][0] if self._cards else None
        for card_id, api in reversed(self._cards):
            if ref in (card_id, api):
                return card_id
        return ref if ref.startswith("card-") else None

    @staticmethod
    def _fail(record: StepRecord, message: str) -> None:
        # The step could not be taken at all (no such card, node or follow-up), so it reports an
        # error: a step is FAILED exactly when it has an error, and a warning-only step passes.
        record.failed = True
        record.diagnostics.append(Diagnostic.make("CMPVM012", message, severity=Severity.ERROR))


def _select(root: RenderNode, sel: NodeSelector, event: str) -> RenderNode | None:
    node: RenderNode
    for node in root.walk():
        if sel.node is not None:
            if node.id == sel.node:
                return node
            continue
        binding = node.events.get(event) if node.events else None
        if binding is None or (sel.handler is not None and binding.handler != sel.handler):
            continue
        if all(binding.dataset.get(k) == v for k, v in sel.dataset.items()):
            return node
    return None


def _dataset_text(dataset: dict[str, Any]) -> str:
    return "".join(f"[{k}={v}]" for k, v in dataset.items())


_STEP_KINDS: tuple[tuple[str, type[_Step]], ...] = (
    ("call", CallStep),
    ("tap", TapStep),
    ("follow", FollowStep),
    ("expire", ExpireStep),
    ("wait", WaitStep),
    ("visibility", VisibilityStep),
)


_KIND_NAMES = ", ".join(k for k, _ in _STEP_KINDS)


def _first_error(model: type[BaseModel], value: Any) -> tuple[tuple[str | int, ...], str] | None:
    from pydantic import ValidationError

    try:
        model.model_validate(value)
    except ValidationError as err:
        first = err.errors(include_url=False)[0]
        loc = tuple(p for p in first["loc"] if isinstance(p, (str, int)))
        what = first["msg"]
        if first["type"] == "extra_forbidden":
            what = f"unknown key {loc[-1]!r}" if loc else "unknown key"
        elif first["type"] == "missing":
            what = f"missing key {loc[-1]!r}" if loc else "a key is missing"
        return loc, what
    return None


def load_flow(text: str, file: str) -> tuple[FlowScript | None, list[Diagnostic]]:
    """Parse a flow script; every problem is a ``RUN043`` diagnostic at its line and column.

    Each step is checked against the one step kind its key names (``call``, ``tap``, ``follow``,
    ``expire``, ``wait``, ``visibility``), so a typo names the key instead of listing what every
    kind would have wanted.
    """
    from skillc.frontend.jsonsrc import JArray, JObject, nearest_span, parse_json_input, pointer

    parsed, diags = parse_json_input(text, file, "RUN043", "the flow script")
    if parsed is None:
        return None, diags
    root = parsed

    def problem(path: tuple[str | int, ...], message: str, *, key: bool = False) -> Diagnostic:
        where = pointer(path) or "/"
        span = nearest_span(root, path, key=key)
        return Diagnostic.make("RUN043", f"flow script {where}: {message}", file=file, span=span)

    if not isinstance(root, JObject):
        return None, [problem((), 'expected an object {"steps": [...]}')]
    steps = root.get("steps")
    for member in root.members:
        if member.key not in ("steps", "description"):
            diags.append(problem((member.key,), f"unknown key {member.key!r} (expected steps, description)", key=True))
    if steps is None:
        diags.append(problem((), "missing key 'steps'"))
    elif not isinstance(steps, JArray):
        diags.append(problem(("steps",), "steps must be an array"))
    else:
        for i, step in enumerate(steps.items):
            kinds = [k for k, _ in _STEP_KINDS if isinstance(step, JObject) and step.get(k) is not None]
            if len(kinds) != 1:
                have = "several of" if kinds else "none of"
                diags.append(problem(("steps", i), f"a step needs exactly one of {_KIND_NAMES} ({have} them)"))
                continue
            model = dict(_STEP_KINDS)[kinds[0]]
            found = _first_error(model, step.to_python())
            if found is not None:
                loc, what = found
                unknown = what.startswith("unknown key")
                diags.append(problem(("steps", i, *loc), f"{kinds[0]} step: {what}", key=unknown))
    if not diags:
        found = _first_error(FlowScript, root.to_python())
        if found is not None:
            diags.append(problem(found[0], found[1]))
    if diags:
        return None, diags
    return FlowScript.model_validate(root.to_python()), []
