"""Class 3 of the hardening issue: Python-side work driven by a card's data is bounded.

Every expansion skill data can drive in Python has a limit (RuntimeConfig ``card_max_*``, mapped to
:class:`skillc.ir.evaluate.RenderLimits`): setData path indices, Render IR nodes per card, template
expansions per render, wx:for over a number, a card's data as JSON. Going over one gives its exact
diagnostic; a new card falls back to the CardSpec card, a mounted card keeps its last render. Each
attack is timed and its Python allocations measured (tracemalloc peak); the serve-level ones also
require a benign skill in the same server to answer while the attack runs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.wxml import parse_wxml
from skillc.ir.component import CompiledComponent
from skillc.ir.datapath import DataPathError, PathIndexError, merge_data, set_data
from skillc.ir.evaluate import CardRenderer, RenderLimits
from skillc.ir.lower import lower_document
from skillc.ir.render import to_plain
from skillc.runtime.cards.card_models import CallOutcome
from tests.hostile.cards import Comp, Host, card_skill, codes, contained, message_of
from tests.hostile.harness import Served, benign_skill, serve, while_attacking

SECONDS = 12.0  # CPU seconds of each attack, tracemalloc on (2x slower); unbounded, these ran 20 s to minutes or hung
MEGABYTES = 200.0  # tracemalloc peak of each attack

NODES = "the card renders more than 20000 nodes (the limit is 20000)"
ITEMS = "wx:for walks more than 20000 items in one render (the limit is 20000)"
TAP = '<view class="n" bindtap="onTap">{{list.length}}</view>'

COMPS = {
    # wx:for nested three deep over data from structuredContent: 10^6 nodes unbounded.
    "nested": Comp(
        '<view wx:for="{{a}}"><view wx:for="{{b}}"><text wx:for="{{c}}">{{item}}</text></view></view>',
        structured={"a": list(range(100)), "b": list(range(100)), "c": list(range(100))},
    ),
    # the same through wx:for-item names, and a list of 10^5 items (under the data limit).
    "long-list": Comp(
        '<view wx:for="{{rows}}" wx:key="*this">{{item}}</view>',
        on_result="this.setData({rows: Array.from({length: 100000}, (_, i) => i)})",
    ),
    # loops whose bodies render nothing still walk their items: 10^5 list items, 5*10^5 characters.
    "empty-body": Comp(
        '<view wx:for="{{rows}}" wx:if="{{item < 0}}">x</view>',
        on_result="this.setData({rows: Array.from({length: 100000}, (_, i) => i)})",
    ),
    "string-body": Comp(
        '<block wx:for="{{s}}"><view wx:if="{{item == \'y\'}}">y</view></block>',
        on_result="this.setData({s: '汉'.repeat(300000)})",
    ),
    # wx:for over a number: WeChat walks 0..n-1.
    "for-2-53": Comp('<view wx:for="{{n}}">{{item}}</view>', structured={"n": 2**53}),
    "for-100001": Comp('<view wx:for="{{n}}">{{item}}</view>', structured={"n": 100001}),
    "for-huge": Comp('<view wx:for="{{n}}">{{item}}</view>', on_result="this.setData({n: 1e300})"),
    "for-within": Comp('<view wx:for="{{n}}" bindtap="onTap">{{item}}</view>', structured={"n": 3}),
    "for-nested-numbers": Comp(
        '<view wx:for="{{n}}" wx:for-item="i"><view wx:for="{{n}}" wx:for-item="j">{{i}}{{j}}</view></view>',
        structured={"n": 20000},
    ),
    # a template that calls itself twice: 2^32 expansions, with or without nodes of its own.
    "twice-empty": Comp('<template name="t"><template is="t"/><template is="t"/></template><template is="t"/>'),
    "twice-nodes": Comp(
        '<template name="t"><view>x</view><template is="t"/><template is="t"/></template><template is="t"/>'
    ),
    "twice-data": Comp(
        '<template name="t"><template is="t" data="{{d}}"/><template is="t" data="{{d}}"/></template>'
        '<template is="t" data="{{d: 1}}"/>'
    ),
    # setData paths that name a huge array index.
    "index-created": Comp(TAP, on_result="this.setData({'fresh[300000000]': 1})"),
    "index-existing": Comp(TAP, on_result="this.setData({'list[300000000]': 1})"),
    "index-dotted": Comp(TAP, on_result="this.setData({'list.300000000': 1})"),
    "index-deep": Comp(TAP, on_result="this.setData({'a[5].b[2000000000]': 1})"),
    "index-ok": Comp(TAP, on_result="this.setData({'list[99999]': 1, 'byId.300000000': 2})"),
    "index-tap": Comp(TAP, on_result="", on_tap="this.setData({'list[300000000]': 1})"),
    # the same through a sparse array handed over whole: JSON.stringify in the VM hits its memory limit.
    "index-sparse": Comp(TAP, on_result="const l = []; l[300000000] = 1; this.setData({list: l})"),
    # data size: 5 MB at mount, 5 MB in a tap, 1 MB gathered over taps, and a list grown past the nodes.
    "data-mount": Comp(TAP, on_result="this.setData({blob: 'x'.repeat(5 << 20)})"),
    "data-tap": Comp(TAP, on_result="", on_tap="this.setData({blob: 'x'.repeat(5 << 20)})"),
    "data-grows": Comp(
        TAP, on_result="", on_tap="this.setData({['k' + Object.keys(this.data).length]: '汉'.repeat(100000)})"
    ),
    "nodes-tap": Comp(
        '<view bindtap="onTap">{{list.length}}</view><view wx:for="{{list}}">{{item}}</view>',
        on_result="",
        on_tap="this.setData({list: Array.from({length: 30000}, (_, i) => i)})",
    ),
}


@pytest.fixture(scope="module")
def h(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    root = tmp_path_factory.mktemp("bounds")
    host = Host(card_skill(root, "bounds", COMPS), root / "state")
    assert host.call("for-within").card is not None  # warm: contexts, compiled templates
    yield host
    host.close()


def _attack(h: Host, api_name: str) -> tuple[CallOutcome, float, float]:
    out, seconds, peak = contained(lambda: h.call(api_name))
    assert seconds < SECONDS, f"{api_name} took {seconds:.1f} s"
    assert peak < MEGABYTES, f"{api_name} allocated {peak:.0f} MB"
    return out, seconds, peak


@pytest.mark.parametrize(
    ("api_name", "code", "message"),
    [
        ("nested", "RND005", NODES),
        ("long-list", "RND005", NODES),
        (
            "for-2-53",
            "RND007",
            "wx:for over the number 9007199254740992 would render 9007199254740992 items (the limit is 20000)",
        ),
        ("for-100001", "RND007", "wx:for over the number 100001 would render 100001 items (the limit is 20000)"),
        ("for-huge", "RND007", "wx:for over the number 1e+300 would render 1e+300 items (the limit is 20000)"),
        ("for-nested-numbers", "RND005", NODES),
        ("empty-body", "RND005", ITEMS),
        ("string-body", "RND005", ITEMS),
        ("twice-empty", "RND006", 'template "t" is expanded more than 10000 times in one render (the limit is 10000)'),
        ("twice-nodes", "RND005", NODES),
        ("twice-data", "RND006", 'template "t" is expanded more than 10000 times in one render (the limit is 10000)'),
    ],
)
def test_an_expansion_past_its_limit_falls_back(h: Host, api_name: str, code: str, message: str) -> None:
    out, _, _ = _attack(h, api_name)
    assert out.card is None
    assert out.fallback is not None
    assert out.fallback.reason == f"components/{api_name}/index could not be rendered: {message}"
    assert out.fallback.structured_content == (COMPS[api_name].structured or {})
    assert message_of(out.diagnostics, code) == message


@pytest.mark.parametrize(
    ("api_name", "index"),
    [
        ("index-created", 300000000),
        ("index-existing", 300000000),
        ("index-dotted", 300000000),
        ("index-deep", 2000000000),
    ],
)
def test_a_huge_setdata_index_is_refused_without_allocating(h: Host, api_name: str, index: int) -> None:
    out, _, _ = _attack(h, api_name)
    assert out.card is not None, out.diagnostics  # the key is ignored; the card shows
    key = COMPS[api_name].on_result.split("'")[1]
    assert message_of(out.diagnostics, "CMPVM015") == (
        f'setData: "{key}" names index {index}, beyond the largest allowed index 100000 '
        "(card_max_data_index); the key is ignored"
    )
    assert out.card.document.root.text_content() == "2"  # list is still [1, 2]


def test_indices_within_the_limit_and_numeric_object_keys_still_work(h: Host) -> None:
    out = h.call("index-ok")
    assert out.card is not None
    assert "CMPVM015" not in codes(out.diagnostics)
    assert out.card.document.root.text_content() == "100000"
    assert out.card.data["byId"] == {"300000000": 2}


def test_a_huge_index_in_a_tap_keeps_the_card(h: Host) -> None:
    card = h.call("index-tap").card
    assert card is not None
    ev, seconds, peak = contained(lambda: h.tap(card.card_id))
    assert seconds < SECONDS and peak < MEGABYTES
    assert "CMPVM015" in codes(ev.diagnostics)
    assert ev.patches == []
    assert ev.document is not None and ev.document.root.text_content() == "2"


def test_a_sparse_array_handed_over_whole_stops_in_the_vm(h: Host) -> None:
    out, _, _ = _attack(h, "index-sparse")
    assert out.card is None and out.fallback is not None
    assert "ran out of memory (limit 64 MB) and was stopped" in message_of(out.diagnostics, "CMPVM011")


def test_python_refuses_a_huge_index_the_vm_let_through() -> None:
    """Below the VM: the renderer and the data-path functions refuse on their own (RND008)."""
    data: dict[str, object] = {"list": [1, 2]}
    for key in ("list[300000000]", "list.300000000", "fresh[300000000]", "a[1].b[100001]"):
        with pytest.raises(PathIndexError):
            merge_data(data, {key: 1})
        with pytest.raises(DataPathError):  # PathIndexError, or "cannot set property" for list.300000000
            set_data({"list": [1]}, {key: 1})
    assert data == {"list": [1, 2]}
    component = _component('<view wx:for="{{list}}">{{item}}</view>')
    sink = DiagnosticSink()
    r = CardRenderer(component, sink=sink)
    r.render({"list": [1, 2]})
    (_, seconds, peak) = contained(lambda: r.update({"list[300000000]": 1}))
    assert seconds < 1 and peak < 10
    assert r.exceeded is not None and r.exceeded.code == "RND008"
    assert [d.message for d in sink if d.code == "RND008"] == [
        "setData path index [300000000] is beyond the largest allowed index (the limit is 100000); "
        "the update was refused"
    ]
    assert len(r.data["list"]) == 2


def test_a_small_number_renders_and_the_limits_are_configurable() -> None:
    component = _component('<view wx:for="{{n}}">{{item}}</view>')
    doc = CardRenderer(component).render({"n": 3})
    assert [n.text for n in doc.root.walk() if n.text is not None] == ["0", "1", "2"]
    tight = CardRenderer(component, sink=DiagnosticSink(), limits=RenderLimits(max_nodes=5, max_for_number=3))
    assert tight.render({"n": 3}).root.children == []  # 3 views + 3 texts: more than 5 nodes
    assert (
        tight.exceeded is not None and tight.exceeded.message == "the card renders more than 5 nodes (the limit is 5)"
    )
    roomy = CardRenderer(component, limits=RenderLimits(max_for_number=2))
    roomy.render({"n": 3})
    assert roomy.exceeded is not None and roomy.exceeded.code == "RND007"


def test_the_node_budget_follows_updates_and_returns_what_a_rerender_frees() -> None:
    component = _component('<view wx:for="{{list}}">{{item}}</view>')
    r = CardRenderer(component, sink=DiagnosticSink(), limits=RenderLimits(max_nodes=100))
    r.render({"list": list(range(40))})  # 80 nodes
    for n in (45, 10, 49, 3, 49):  # each re-render gives its old nodes back
        r.update({"list": list(range(n))})
        assert r.exceeded is None, n
    r.update({"list": list(range(51))})  # 102 nodes
    assert r.exceeded is not None and r.exceeded.code == "RND005"


def test_a_tap_past_the_node_budget_keeps_the_last_render(h: Host) -> None:
    card = h.call("nodes-tap").card
    assert card is not None
    before = to_plain(card.document)
    ev, seconds, peak = contained(lambda: h.tap(card.card_id))
    assert seconds < SECONDS and peak < MEGABYTES
    assert message_of(ev.diagnostics, "RND005") == NODES
    assert ev.document is not None and to_plain(ev.document) == before
    view = h.run(h.host.card(card.card_id))
    assert view.data == {"list": [1, 2]}  # the VM's data went back as well


def test_five_megabytes_of_data_at_mount_fall_back(h: Host) -> None:
    out, _, _ = _attack(h, "data-mount")
    assert out.card is None and out.fallback is not None
    size = len(json.dumps({"list": [1, 2], "blob": "x" * (5 << 20)}, separators=(",", ":")))
    assert message_of(out.diagnostics, "CMPVM016") == (
        f"components/data-mount/index: its data is {size} bytes as JSON, more than the limit of "
        "1048576 bytes; the card falls back"
    )


def test_five_megabytes_in_a_tap_keep_the_last_data_and_render(h: Host) -> None:
    card = h.call("data-tap").card
    assert card is not None
    before = to_plain(card.document)
    ev, seconds, peak = contained(lambda: h.tap(card.card_id))
    assert seconds < SECONDS and peak < MEGABYTES
    message = message_of(ev.diagnostics, "CMPVM016")
    assert message.startswith("components/data-tap/index: a setData is ")
    assert message.endswith(
        " bytes as JSON, more than the limit of 1048576 bytes; the card keeps its last data and render"
    )
    assert ev.document is not None and to_plain(ev.document) == before
    view = h.run(h.host.card(card.card_id))
    assert "blob" not in view.data
    again = h.tap(card.card_id)  # the VM's data went back too: the same refusal, not a bigger one
    assert "CMPVM016" in codes(again.diagnostics)


def test_data_gathered_over_taps_stops_at_the_limit(h: Host) -> None:
    card = h.call("data-grows").card
    assert card is not None
    sizes = []
    for _ in range(6):  # each tap adds 300 000 bytes (100 000 CJK characters)
        ev = h.tap(card.card_id)
        sizes.append("CMPVM016" in codes(ev.diagnostics))
    assert sizes == [False, False, False, True, True, True]
    assert "its data is " in message_of(ev.diagnostics, "CMPVM016")
    stored = h.host.store.load(card.card_id)
    assert stored is not None and len(stored[1]) == 1 + 3  # list and three blobs


def _component(wxml: str) -> CompiledComponent:
    sink = DiagnosticSink()
    template = lower_document(parse_wxml(wxml, file="t.wxml", sink=sink), load=lambda _: None, sink=sink)
    return CompiledComponent("t", template, None)


# -- served: a benign skill answers while the attack runs -----------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("served")
    attacker = card_skill(root, "attacker", {k: COMPS[k] for k in ("nested", "for-2-53", "twice-empty", "data-mount")})
    with serve(attacker, benign_skill(root), state=root / "state") as s:
        yield s


@pytest.mark.parametrize(
    ("api_name", "code"),
    [("nested", "RND005"), ("for-2-53", "RND007"), ("twice-empty", "RND006"), ("data-mount", "CMPVM016")],
)
def test_served_attacks_are_contained_and_the_server_answers_meanwhile(
    served: Served, api_name: str, code: str
) -> None:
    cpu = served.cpu_seconds()
    attack, probe = while_attacking(served, (api_name, {}), ("ping", {}))
    spent = served.cpu_seconds() - cpu
    assert spent < SECONDS, f"{api_name}: {spent:.1f} CPU seconds in the server"
    assert probe.text == "pong"
    meta = attack.result["_meta"]
    assert "skillc/fallback" in meta and "skillc/card" not in meta
    assert code in [d["code"] for d in meta["skillc/diagnostics"]]
