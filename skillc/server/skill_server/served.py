"""The skills a server runs: each with its own :class:`ApiRuntime` and :class:`CardHost`, booted
at start-up (a skill whose index.js cannot load is withdrawn, SRV004), and which skill each card
belongs to."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial

from skillc.diagnostics import Diagnostic, Span
from skillc.ir.viewport import Viewport
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.cards.card_host import CardHost
from skillc.runtime.cards.card_models import TimerFiring
from skillc.runtime.config import RuntimeConfig
from skillc.server.catalog import Catalogue, LoadedSkill
from skillc.server.skill_docs import SkillDoc, skill_doc
from skillc.server.skill_server.answer import current_answer
from skillc.server.view import image_origins

log = logging.getLogger("skillc.server")


@dataclass
class ServedSkill:
    runtime: ApiRuntime
    cards: CardHost
    resource_domains: list[str]
    tool_names: dict[str, str]  # API name -> tool name, for the card view's api/call blocks
    doc: SkillDoc


class ServedSkills:
    """The served skills by name. ``progress`` hears of each skill just before its runtime boots
    (the slow part of start-up); ``on_timer(skill, firing)`` of each timer a dynamic card runs on
    its own."""

    def __init__(
        self,
        catalogue: Catalogue,
        config: RuntimeConfig,
        *,
        viewport: Viewport,
        progress: Callable[[LoadedSkill], object] | None,
        on_timer: Callable[[str, TimerFiring], None],
    ) -> None:
        self.by_name: dict[str, ServedSkill] = {}
        self._card_skill: dict[str, str] = {}
        for loaded in list(catalogue.skills):
            name = loaded.package.name
            if progress is not None:
                progress(loaded)
            runtime = ApiRuntime(loaded.package, config)
            refusal = _load_refusal(runtime, loaded.display)
            if refusal is not None:
                runtime.close()
                _withdraw(catalogue, name, refusal)
                continue
            cards = CardHost(runtime, viewport=viewport)
            cards.on_timer = partial(on_timer, name)
            self.by_name[name] = ServedSkill(
                runtime,
                cards,
                image_origins(loaded.package),
                catalogue.tool_names(name),
                skill_doc(loaded.package),
            )

    def cards(self, skill: str) -> CardHost | None:
        """The card host of a served skill (None for one that is not served)."""
        served = self.by_name.get(skill)
        return served.cards if served is not None else None

    def mounted(self, card_id: str, skill: str) -> None:
        self._card_skill[card_id] = skill

    async def skill_of_card(self, card_id: str) -> str | None:
        name = self._card_skill.get(card_id)
        if name is None:
            # A card from before a restart: the skill whose store knows it.
            for candidate, skill in self.by_name.items():
                if await skill.cards.card(card_id) is not None:
                    name = self._card_skill[card_id] = candidate
                    break
        answer = current_answer()
        if answer is not None and name is not None:  # the request log names the skill a card call reached
            answer.skill = name
        return name

    def session_of_card(self, skill: str, card_id: str) -> str | None:
        served = self.by_name.get(skill)
        return served.cards.session_of(card_id) if served is not None else None

    async def close(self) -> None:
        for skill in self.by_name.values():
            await skill.cards.close()
            skill.runtime.close()


def _load_refusal(runtime: ApiRuntime, display: str) -> Diagnostic | None:
    """SRV004 when the skill's index.js cannot load: every call would fail with RUN001, so its tools
    would only advertise what cannot run."""
    # A thread of its own: the server may be built inside a running event loop (tests, embedders).
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="skillc-load-check") as pool:
        report = pool.submit(asyncio.run, runtime.load()).result()
    failed = next((d for d in report.diagnostics if d.code == "RUN001"), None)
    if failed is None:
        return None
    where = next((c for c in report.console if c.level == "error" and c.file and c.line), None)
    span = Span.point(where.line, where.column or 1) if where is not None and where.line else None
    file = where.file if where is not None else failed.file
    return Diagnostic.make(
        "SRV004",
        f"{runtime.package.name} is not served: {failed.message}; none of its tools are advertised",
        file=f"{display}/{file}" if file else display,
        span=span,
        hint=f"run `skillc check {display}`",
    )


def _withdraw(catalogue: Catalogue, skill: str, refusal: Diagnostic) -> None:
    """Take a skill that cannot load out of the catalogue the server (and `skillc serve`) reads."""
    log.warning("%s", refusal.message)
    catalogue.skills = [s for s in catalogue.skills if s.package.name != skill]
    catalogue.apis = {t: a for t, a in catalogue.apis.items() if a.skill != skill}
    catalogue.components = {u: c for u, c in catalogue.components.items() if c[0] != skill}
    catalogue.diagnostics.append(refusal)
