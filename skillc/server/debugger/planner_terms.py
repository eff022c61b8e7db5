"""The text analysis of the offline planner: the terms a query and a tool share, in any script.

Scripts written with spaces (Latin, Cyrillic, Greek, Hangul...) give words: lower-cased,
camelCase split, stop words out, a plural ``s`` also without it. Scripts written without spaces
(Han, kana, Thai, Lao, Khmer, Myanmar, Tibetan) give character bigrams, so 我要一杯拿铁 shares
拿铁 with a text that names 拿铁 wherever it stands; a run of one character is its own term.

A tool's text comes from its name, its description (its 【严禁场景】 part, what it must never be
used for, left out), its parameters' names, descriptions and enum values, and the passages of its
skill's SKILL.md that name it (:func:`guide_passages`).

What a free-text argument gets is the query without the words that only ask
(:func:`strip_filler`, :data:`ASKING_WORDS`): 我要一杯拿铁 -> 拿铁, "I want a latte" -> latte.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

# Unicode blocks of scripts written without spaces between words.
_SPACELESS = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x0F00, 0x0FFF),  # Tibetan
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0x20000, 0x3FFFF),  # CJK extensions B..
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
STOP_WORDS = frozenset({"a", "an", "the", "to", "of", "for", "and", "or", "in", "on", "me", "i", "my", "is", "e", "g"})
# What a tool must never be used for (WeChat's description convention) is no reason to pick it.
_NEVER = re.compile(r"【严禁场景】[^【]*")

# Chinese words that ask rather than name: stripped from the start of a run (repeatedly, longest
# first), with counted measures (一杯, 两份, 3个); particles and thanks from its end. The
# characters in _ONLY_BEFORE start names too (点心, 有机, 看板), so they go only when another
# asking word or a measure follows them.
_LEADING = sorted(
    {
        "我想要", "我想", "我要", "想要", "给我", "帮我", "请帮我", "麻烦", "请", "来", "要",
        "买", "喝", "找", "搜索", "搜", "查找", "查询", "查", "看看", "有没有", "一下",
        "点", "吃", "看", "有", "想", "我",
    },
    key=len,
    reverse=True,
)  # fmt: skip
_ONLY_BEFORE = frozenset({"点", "吃", "看", "有", "想", "我"})
# The same for words of scripts with spaces (English): dropped from a free-text argument.
ASKING_WORDS = frozenset(
    {"i", "we", "want", "wants", "would", "like", "please", "can", "could", "get", "give", "me", "us",
     "some", "a", "an", "the", "one", "cup", "of", "have", "find", "show", "need", "looking", "for"}
)  # fmt: skip
_MEASURE = re.compile(r"^[一二两三四五六七八九十几0-9０-９]+[杯份个瓶碗盒袋]")
_TRAILING = sorted({"吧", "吗", "呢", "啊", "呀", "了", "的", "谢谢", "好吗", "可以吗"}, key=len, reverse=True)


def is_spaceless(ch: str) -> bool:
    code = ord(ch)
    return any(lo <= code <= hi for lo, hi in _SPACELESS)


def _is_word_char(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "LMN"


def _runs(text: str) -> list[str]:
    """Maximal runs of letters, marks and digits, each split where a spaceless script starts or ends."""
    out: list[str] = []
    current = ""
    for ch in text:
        if not _is_word_char(ch):
            if current:
                out.append(current)
            current = ""
        elif current and is_spaceless(ch) != is_spaceless(current[-1]):
            out.append(current)
            current = ch
        else:
            current += ch
    if current:
        out.append(current)
    return out


def terms(text: str) -> set[str]:
    """The terms of ``text``: words, or character bigrams in scripts written without spaces."""
    out: set[str] = set()
    for run in _runs(_CAMEL.sub(" ", text)):
        word = run.casefold()
        if is_spaceless(word[0]):
            out.update({word} if len(word) == 1 else {word[i : i + 2] for i in range(len(word) - 1)})
        elif word not in STOP_WORDS and len(word) > 1:
            out.add(word)
            if len(word) > 3 and word.endswith("s"):
                out.add(word[:-1])  # drinks ~ drink
    return out


def description_text(description: str) -> str:
    return _NEVER.sub(" ", description)


def parameter_text(schema: dict[str, Any]) -> str:
    """Parameter names, descriptions and enum values of an inputSchema, as one text."""
    parts: list[str] = []
    props = schema.get("properties")
    if isinstance(props, dict):
        for name, prop in props.items():
            parts.append(str(name))
            if isinstance(prop, dict):
                if isinstance(prop.get("description"), str):
                    parts.append(prop["description"])
                enum = prop.get("enum")
                if isinstance(enum, list):
                    parts += [v for v in enum if isinstance(v, str)]
    return " ".join(parts)


def guide_passages(skill_md: str, name: str) -> str:
    """The paragraphs and list items of a SKILL.md that name the tool ``name`` (as a whole word)."""
    mention = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])")
    passages: list[str] = []
    current: list[str] = []
    for line in [*skill_md.splitlines(), ""]:
        starts_item = re.match(r"^\s*(?:[-*+]|\d+[.)])\s", line) is not None
        if not line.strip() or starts_item or line.lstrip().startswith("#"):
            if current:
                passages.append(" ".join(current))
            current = [line.strip()] if line.strip() else []
        else:
            current.append(line.strip())
    return "\n".join(p for p in passages if mention.search(p))


def strip_filler(word: str) -> str:
    """A run of a spaceless script without what only asks: 我要一杯拿铁 -> 拿铁, 来两杯冰美式吧 -> 冰美式.
    Never strips the whole word."""
    rest = word
    changed = True
    while changed:
        changed = False
        measure = _MEASURE.match(rest)
        if measure is not None and measure.end() < len(rest):
            rest, changed = rest[measure.end() :], True
            continue
        for lead in _LEADING:
            if not rest.startswith(lead) or len(rest) <= len(lead):
                continue
            after = rest[len(lead) :]
            if lead in _ONLY_BEFORE and not (_MEASURE.match(after) or any(after.startswith(x) for x in _LEADING)):
                continue
            rest, changed = after, True
            break
    for tail in _TRAILING:
        if rest.endswith(tail) and len(rest) > len(tail):
            rest = rest[: -len(tail)]
            break
    return rest
