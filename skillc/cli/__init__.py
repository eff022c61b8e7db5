"""The command line (click): one module per command, loaded when its name is on the command line.

Commands import the phases they need when they run: `skillc --help` and `skillc check` should
not pay for the evaluator, the backends, QuickJS or the MCP server. Even the diagnostics model
(pydantic) waits for a command: `--help`, `--version` and shell completion, which runs this
package on every Tab, then cost little more than click. tests/test_startup.py keeps it so.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from skillc import __version__
from skillc.cli.output import EXIT_ERRORS, use_color
from skillc.cli.output import echo_text as _echo

EXIT_INTERRUPTED = 130

__all__ = ["COMMANDS", "_echo", "main", "use_color"]

# Command name -> the module that defines it, under a function of the same name.
COMMANDS = {
    "agent": "skillc.cli.agent",
    "build": "skillc.cli.build",
    "call": "skillc.cli.call",
    "check": "skillc.cli.check",
    "codes": "skillc.cli.codes",
    "debug": "skillc.cli.debug",
    "render": "skillc.cli.render",
    "run": "skillc.cli.run",
    "schema": "skillc.cli.schema",
    "serve": "skillc.cli.serve",
    "state": "skillc.cli.state",
}


class _Commands(click.Group):
    """The commands of COMMANDS, each imported on first use. And for every command: a state store
    that cannot be opened (a state dir under a regular file, an unreachable PostgreSQL) is one line
    on stderr and exit 1, not a traceback."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            command = getattr(importlib.import_module(COMMANDS[cmd_name]), cmd_name)
            assert isinstance(command, click.Command), COMMANDS[cmd_name]
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] not in COMMANDS:
            # click suggests close names ("Did you mean 'state'?") from the commands loaded so far.
            for name in COMMANDS:
                self.get_command(ctx, name)
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (KeyboardInterrupt, click.Abort):
            # Ctrl-C ends a long-running command (debug, serve, run): the shell's 128 + SIGINT,
            # without click's "Aborted!" and exit 1. A VM still running on a worker thread is
            # stopped through its deadline, or the interpreter would wait for it at exit.
            from skillc.runtime.api.cancel import interrupt_all

            interrupt_all()
            sys.exit(EXIT_INTERRUPTED)
        except Exception as err:
            from skillc.runtime.state.store import StateError  # only when something failed: start-up stays light

            if not isinstance(err, StateError):
                raise
            click.echo(f"skillc: error: {err}", err=True)
            sys.exit(EXIT_ERRORS)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="skillc")
def main() -> None:
    """skillc: check, compile, render, run and serve WeChat Mini Program AI-mode skills.

    A skill is a folder with SKILL.md, mcp.json, index.js, apis/ and components/.
    Start with `skillc check PATH`; every command explains itself with --help.
    """
