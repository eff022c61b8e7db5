"""Phase 1, load and parse: the skill folder, mcp.json, scripts (scanned), WXML, expressions, WXSS.

Output: a SkillPackage with typed trees carrying source spans, plus diagnostics.
Knows nothing of the later phases.
"""
