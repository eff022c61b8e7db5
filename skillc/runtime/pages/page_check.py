"""What a page uses beyond what the console runs, found in its sources with file:line:col: hooks
it never calls, wx APIs of the page frame, page.json's window options and custom components.
The page still renders; these say what will not happen as it would in WeChat."""

from __future__ import annotations

import posixpath
import re

from skillc.diagnostics import Diagnostic, DiagnosticSink
from skillc.frontend.consistency import Script
from skillc.frontend.jsonsrc import JObject, JScalar, parse_json
from skillc.runtime.pages.page_source import PageSource

# Hooks the console runs: onLoad (with the handoff query), onShow, onReady.
_LIFECYCLE = ("onHide", "onUnload", "onRouteDone", "onSaveExitState")
_GESTURES = ("onPullDownRefresh", "onReachBottom")
_PAGE_EVENTS = ("onPageScroll", "onResize", "onTabItemTap", "onShareAppMessage", "onShareTimeline", "onAddToFavorites")
_NAVIGATION = ("navigateTo", "redirectTo", "navigateBack", "switchTab", "reLaunch")
_FRAME = (
    "setNavigationBarTitle",
    "setNavigationBarColor",
    "showNavigationBarLoading",
    "hideNavigationBarLoading",
    "hideHomeButton",
    "startPullDownRefresh",
    "stopPullDownRefresh",
    "pageScrollTo",
    "setBackgroundColor",
    "setBackgroundTextStyle",
    "showTabBar",
    "hideTabBar",
    "setTabBarItem",
    "setTabBarStyle",
    "setTabBarBadge",
    "removeTabBarBadge",
    "showTabBarRedDot",
    "hideTabBarRedDot",
)
# page.json keys that configure the window around the page (WeChat's page configuration).
WINDOW_OPTIONS = frozenset(
    {
        "navigationBarBackgroundColor",
        "navigationBarTextStyle",
        "navigationBarTitleText",
        "navigationStyle",
        "homeButton",
        "backgroundColor",
        "backgroundColorContent",
        "backgroundTextStyle",
        "backgroundColorTop",
        "backgroundColorBottom",
        "enablePullDownRefresh",
        "onReachBottomDistance",
        "pageOrientation",
        "disableScroll",
        "initialRenderingCache",
        "restartStrategy",
        "visualEffectInBackground",
        "handleWebviewPreload",
    }
)


def _names(names: tuple[str, ...]) -> str:
    return "|".join(names)


# A hook as a method or a property of the Page({...}) object: `onUnload() {`, `onUnload: function`.
_HOOK = re.compile(rf"(?<![\w$.])({_names(_LIFECYCLE + _GESTURES + _PAGE_EVENTS)})\s*(?=\(|:)")
_WX = re.compile(rf"\bwx\s*\.\s*({_names(_NAVIGATION + _FRAME)})\b")
_APP = re.compile(r"(?<![\w$.])(getApp|getCurrentPages)\s*\(")


def check_page(source: PageSource) -> list[Diagnostic]:
    """The static findings of one page (PAGE006-PAGE011, PAGE013-PAGE015)."""
    found: list[Diagnostic] = []
    js = source.text("js")
    if js is not None:
        found += _check_script(Script(source.path("js"), js), source.route)
    found += _check_json(source)
    return found


def _check_script(script: Script, route: str) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    text = script.masked
    for m in _HOOK.finditer(text):
        name = m.group(1)
        span = script.span(m.start(1), m.end(1))
        if name in _LIFECYCLE:
            code, why = "PAGE006", "the console opens one page and never hides or leaves it"
        elif name in _GESTURES:
            gesture = "pull-down" if name == "onPullDownRefresh" else "scroll-to-the-end"
            code, why = "PAGE007", f"the console has no {gesture} gesture"
        else:
            code, why = "PAGE008", "the console never fires that page event"
        message = f"{route} defines {name}, which the debug console never calls: {why}"
        out.append(Diagnostic.make(code, message, file=script.path, span=span))
    for m in _WX.finditer(text):
        name = m.group(1)
        span = script.span(m.start(), m.end())
        if name in _NAVIGATION:
            message = (
                f"{route} calls wx.{name}: the debug console shows one page (the handoff's), "
                "so the call fails; render the other page with render_page instead"
            )
            out.append(Diagnostic.make("PAGE009", message, file=script.path, span=span))
        else:
            message = (
                f"{route} calls wx.{name}: the debug console draws no page frame around the page, so the call fails"
            )
            out.append(Diagnostic.make("PAGE010", message, file=script.path, span=span))
    for m in _APP.finditer(text):
        name = m.group(1)
        span = script.span(m.start(1), m.end(1))
        gives = "{globalData: {}}" if name == "getApp" else "this page alone"
        message = f"{route} calls {name}(): no App() runs in the debug console; it gives {gives}"
        out.append(Diagnostic.make("PAGE015", message, file=script.path, span=span))
    return out


def _check_json(source: PageSource) -> list[Diagnostic]:
    text = source.text("json")
    file = source.path("json")
    if text is None:
        return []
    sink = DiagnosticSink()
    tree = parse_json(text, file, sink)
    if not isinstance(tree, JObject):
        first = next(iter(sink), None)
        why = first.message if first is not None else "it is not a JSON object"
        span = first.span if first is not None else None
        return [Diagnostic.make("PAGE014", f"{file} is ignored: {why}", file=file, span=span)]
    out: list[Diagnostic] = []
    for member in tree.members:
        if member.key in WINDOW_OPTIONS:
            message = (
                f"{file} sets the window option {member.key}: the debug console draws no window frame "
                "and does not apply it"
            )
            out.append(Diagnostic.make("PAGE013", message, file=file, span=member.key_span))
    using = tree.get("usingComponents")
    if isinstance(using, JObject):
        for member in using.members:
            value = member.value
            target = value.value if isinstance(value, JScalar) and isinstance(value.value, str) else None
            if target is not None and _component_exists(source, target):
                continue
            message = (
                f'usingComponents "{member.key}" of {file} names {target!r}, whose files are not in the project'
                if target is not None
                else f'usingComponents "{member.key}" of {file} must be a path string'
            )
            out.append(Diagnostic.make("PAGE011", message, file=file, span=value.span))
    return out


def custom_tags(source: PageSource) -> set[str]:
    """The tags the page's .json declares as custom components (usingComponents keys)."""
    text = source.text("json")
    if text is None:
        return set()
    tree = parse_json(text, source.path("json"), DiagnosticSink())
    using = tree.get("usingComponents") if isinstance(tree, JObject) else None
    return {m.key for m in using.members} if isinstance(using, JObject) else set()


def _component_exists(source: PageSource, target: str) -> bool:
    if target.startswith("plugin://"):
        return False  # plugins live outside the project
    base = "" if target.startswith("/") else posixpath.dirname(source.route)
    rel = posixpath.normpath(posixpath.join(base, target.lstrip("/")))
    if rel.startswith(".."):
        return False
    candidates = [f"{rel}.wxml", f"{rel}.js", f"{rel}/index.wxml", f"{rel}/index.js"]
    if not target.startswith((".", "/")):  # an npm package: miniprogram_npm/<name>
        candidates += [f"miniprogram_npm/{target}/index.js", f"miniprogram_npm/{target}.js"]
    return any((source.root / c).is_file() for c in candidates)
