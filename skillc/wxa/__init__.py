"""Drop-in artefacts of WeChat's ``cli agent`` and validator, written on Linux from skillc's own
runtime and renderer: execute results, render snapshots with their element tree, the V019
destructive manifest and ``validate-report.json``. docs/wechat-cli.md maps each field.

This package sits beside the drivers: it uses the frontend, the IR, the backends and the
runtime, and nothing but the CLI imports it.
"""
