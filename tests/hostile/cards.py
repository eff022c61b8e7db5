"""A hostile card skill written on the spot: one API per component, each component a template and
an index.js; and an in-process card host to drive it (with tracemalloc and a CPU clock)."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from skillc.diagnostics import Diagnostic, DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.cards.card_host import CardHost
from skillc.runtime.cards.card_models import CallOutcome, EventOutcome
from skillc.runtime.config import RuntimeConfig
from tests.hostile.harness import api, write_skill

# What every component's index.js starts from: the API result's structuredContent becomes data.
ON_RESULT = """\
Component({
  data: { list: [1, 2] },
  lifetimes: {
    created () {
      const N = wx.modelContext.NotificationType
      wx.modelContext.getContext(this).on(N.Result, ({ result }) => { %(on_result)s })
    }
  },
  methods: { onTap () { %(on_tap)s } }
})
"""


@dataclass(frozen=True)
class Comp:
    """One component: its template, what its Result handler and its tap handler run, and what its
    API returns as structuredContent."""

    wxml: str
    on_result: str = "this.setData(result.structuredContent)"
    on_tap: str = ""
    structured: Any = None


def card_skill(root: Path, name: str, comps: dict[str, Comp], *, benign: bool = False) -> Path:
    """A skill with API ``<comp>`` bound to ``components/<comp>/index`` for each component."""
    files: dict[str, str] = {}
    apis = []
    lines = [f"const skill = wx.modelContext.createSkill('{name}')"]
    for comp_name, c in comps.items():
        base = f"components/{comp_name}/index"
        files[base + ".wxml"] = c.wxml
        files[base + ".js"] = ON_RESULT % {"on_result": c.on_result, "on_tap": c.on_tap}
        files[base + ".json"] = '{"component": true, "usingComponents": {}}'
        files[base + ".wxss"] = ""
        apis.append(api(comp_name, _meta={"ui": {"componentPath": base}}))
        sc = json.dumps(c.structured if c.structured is not None else {})
        lines.append(
            f"skill.registerAPI('{comp_name}', async () => "
            f"({{ content: [{{ type: 'text', text: '{comp_name}' }}], structuredContent: {sc} }}))"
        )
    if benign:
        apis.append(api("ping"))
        lines.append("skill.registerAPI('ping', async () => ({ content: [{ type: 'text', text: 'pong' }] }))")
    components = [{"path": f"components/{n}/index"} for n in comps]
    return write_skill(root, name, "\n".join(lines) + "\n", apis, files=files, components=components)


class Host:
    """A card host on a private event loop; each call runs to completion."""

    def __init__(self, skill: Path, state: Path, *, max_cards: int = 64, **config: Any) -> None:
        pkg = load_skill(skill, DiagnosticSink())
        assert pkg is not None
        self.runtime = ApiRuntime(pkg, RuntimeConfig(state_dir=state, **config))
        counter = itertools.count(1)
        self.loop = asyncio.new_event_loop()
        self.host = CardHost(self.runtime, card_ids=lambda: f"card-{next(counter)}", max_cards=max_cards)
        self.ctx = self.runtime.context(session_id="s1")

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def call(self, api_name: str, args: dict[str, Any] | None = None) -> CallOutcome:
        out: CallOutcome = self.run(self.host.call(api_name, args or {}, self.ctx))
        return out

    def tap(self, card_id: str, handler: str = "onTap") -> EventOutcome:
        view = self.run(self.host.card(card_id))
        node = next(n for n in view.document.root.walk() if n.events and n.events["tap"].handler == handler)
        out: EventOutcome = self.run(self.host.event(card_id, node.id, "tap"))
        return out

    def close(self) -> None:
        self.run(self.host.close())
        self.runtime.close()
        self.loop.close()


T = TypeVar("T")


def contained(fn: Callable[[], T]) -> tuple[T, float, float]:
    """Run ``fn``; its result, the CPU seconds of this process while it ran (every thread: the VM
    runs on a worker) and its tracemalloc peak in MB (Python allocations). CPU time measures the
    work, not how busy the machine is: an unbounded attack burns tens of CPU seconds anyway."""
    tracemalloc.start()
    t0 = time.process_time()
    try:
        out = fn()
        seconds = time.process_time() - t0
        peak = tracemalloc.get_traced_memory()[1] / (1 << 20)
    finally:
        tracemalloc.stop()
    return out, seconds, peak


def codes(diagnostics: list[Diagnostic]) -> list[str]:
    return [d.code for d in diagnostics]


def message_of(diagnostics: list[Diagnostic], code: str) -> str:
    found = [d.message for d in diagnostics if d.code == code]
    assert found, f"no {code} in {[(d.code, d.message) for d in diagnostics]}"
    return found[0]
