"""Reading the user profile file (``--profile FILE``): JSON checked against
:class:`~skillc.runtime.config.UserProfile`, each problem a diagnostic at its line and column.

The profile is what the host knows about the user, the answers of the profile stand-ins
(host/standins.py)::

    {"phone": {"purePhoneNumber": "13800138000", "countryCode": "86"},
     "addresses": [{"userName": "...", "telNumber": "...", "provinceName": "...", "cityName": "...",
                    "countyName": "...", "detailInfo": "...", "postalCode": "...", "default": true}],
     "location": {"latitude": 31.2304, "longitude": 121.4737, "accuracy": 30}}
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from skillc.diagnostics import Diagnostic
from skillc.frontend.jsonsrc import JObject, nearest_span, parse_json_input, pointer
from skillc.runtime.config import UserProfile

MAX_PROBLEMS = 20  # a file of another shape entirely would otherwise list every key


def _keys(model: type[UserProfile]) -> str:
    return ", ".join(f.alias or name for name, f in model.model_fields.items())


def load_profile(text: str, file: str) -> tuple[UserProfile | None, list[Diagnostic]]:
    """The profile in ``text``, or None and why: JSON syntax codes for what is not JSON, ``RUN102``
    for a shape :class:`UserProfile` refuses (unknown or missing keys, wrong types, out of range)."""
    root, problems = parse_json_input(text, file, "RUN102", "the user profile")
    if root is None:
        return None, problems
    if not isinstance(root, JObject):
        message = f"user profile /: expected an object with {_keys(UserProfile)}"
        return None, [Diagnostic.make("RUN102", message, file=file, span=root.span)]
    try:
        return UserProfile.model_validate(root.to_python()), []
    except ValidationError as err:
        diags: list[Diagnostic] = []
        for problem in err.errors(include_url=False)[:MAX_PROBLEMS]:
            loc = tuple(p for p in problem["loc"] if isinstance(p, (str, int)))
            what = problem["msg"]
            key = False
            if problem["type"] == "extra_forbidden":
                what, key = f"unknown key {loc[-1]!r}", True
            elif problem["type"] == "missing":
                what = f"missing key {loc[-1]!r}"
            span = nearest_span(root, loc, key=key)
            message = f"user profile {pointer(loc) or '/'}: {what}"
            diags.append(Diagnostic.make("RUN102", message, file=file, span=span))
        return None, diags


def read_profile(path: Path) -> tuple[UserProfile | None, list[Diagnostic], str]:
    """:func:`load_profile` of a file; the third item is its text (for rendering the diagnostics)."""
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        return None, [Diagnostic.make("RUN102", f"cannot read the user profile: {reason}", file=str(path))], ""
    profile, diags = load_profile(text, str(path))
    return profile, diags, text
