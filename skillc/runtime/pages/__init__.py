"""Mini-program pages as the AI-mode handoff opens them, for the debug console: the page's WXML and
WXSS through the card compiler, ``Page({...})`` in the component VM with the handoff query, taps
and setData. What a page uses beyond that is reported as PAGE diagnostics, never raised.

- :mod:`.page_source`: where a route's files are (the skill's mini-program project) and what its
  JavaScript may require;
- :mod:`.page_check`: the static findings (hooks, navigation, page.json, custom components);
- :mod:`.page_compile`: WXML + WXSS -> the compiled template the card renderer draws;
- :mod:`.page_vm`: the component VM booted with ``Page`` instead of ``Component``;
- :mod:`.page`: one open page: load with the query, taps, the Render IR after each.
"""
