"""The sandbox: the QuickJS engine (one locked-down context per use, a wall-clock deadline, the
JSON bridge, console capture) and the sandboxed CommonJS module loader both VMs share."""
