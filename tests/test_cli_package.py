"""The command table of skillc.cli: one module per command, each listed, each loaded by name."""

from __future__ import annotations

import importlib
from pathlib import Path

import click

from skillc.cli import COMMANDS, main

CLI = Path(__file__).resolve().parents[1] / "skillc" / "cli"
SHARED = {"__init__", "options", "output"}


def test_every_command_module_is_in_the_table() -> None:
    modules = {p.stem for p in CLI.glob("*.py")} - SHARED
    assert modules == set(COMMANDS)
    assert all(module == f"skillc.cli.{name}" for name, module in COMMANDS.items())


def test_each_entry_names_a_command_of_its_name() -> None:
    for name, module in COMMANDS.items():
        command = getattr(importlib.import_module(module), name)
        assert isinstance(command, click.Command) and command.name == name
        assert main.get_command(click.Context(main), name) is command
