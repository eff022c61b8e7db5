"""The Atomic API VM and the one call chain every API call goes through: inputSchema, consent,
the VM, the result rules, outputSchema, the audit record (and the process guard fallback)."""
