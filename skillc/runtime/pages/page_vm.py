"""The component VM booted for a page: ``Page`` (with ``getApp`` and ``getCurrentPages``) instead
of ``Component``, the page's .js as the main module, and the page hooks with their arguments.
setData, the change queue, events and the wx host are the card VM's (component_vm.js)."""

from __future__ import annotations

import json
from typing import Any

from skillc.runtime.cards.component_vm import CARD_QUERY_JS, COMPONENT_VM_JS, ComponentVm
from skillc.runtime.host.calls import WX_JS
from skillc.runtime.host.unavailable import stubs_json
from skillc.runtime.sandbox.engine import JsFault
from skillc.runtime.sandbox.modules import JsError, boot, define_modules

_PAGE_DRIVERS = ("bootPage", "createPage", "pageHook")


class PageVm(ComponentVm):
    def load(self) -> JsError | None:
        """Run the VM scripts with ``Page`` defined, register the modules, run the page's .js."""
        s = self._slice()
        boot(s, WX_JS, CARD_QUERY_JS, COMPONENT_VM_JS)
        names = (*_DRIVER_NAMES, *_PAGE_DRIVERS)
        self._fns = {name: s.pick(name) for name in names}
        s.call(self._fns["setUnavailable"], stubs_json("card", False))
        s.call(self._fns["bootPage"], self._max_index)
        s.seal()
        error = define_modules(s, self._code, self._fns["defineModule"], self._fns["defineJson"])
        if error is not None:
            return self._fault_or(JsError.from_text(error))
        return self._result(s.call(self._fns["runMain"], self._main))

    def _fault_or(self, err: JsError) -> JsError:
        """As the card VM's, without its static-card wording (a page is not a card)."""
        if err.fault != "error":
            raise JsFault(err.fault, err.headline)
        return err

    def create_page(self, route: str, query: dict[str, str]) -> JsError | None:
        """The instance from Page()'s data, with ``this.route`` and ``this.options`` (the query)."""
        return self._result(self._slice().call(self._fns["createPage"], route, json.dumps(query, ensure_ascii=False)))

    def hook(self, name: str, arg: Any = None) -> JsError | None:
        """Run a page hook (onLoad with its query, onShow, onReady); one the page lacks is no error."""
        return self._result(self._slice().call(self._fns["pageHook"], name, json.dumps(arg, ensure_ascii=False)))


# The card VM's drivers a page uses as they are.
_DRIVER_NAMES = (
    "defineModule",
    "defineJson",
    "setUnavailable",
    "runMain",
    "event",
    "take",
    "runCallbacks",
    "snapshot",
    "restore",
    "stopTimers",
    "fireTimer",
    "answerQueries",
)
