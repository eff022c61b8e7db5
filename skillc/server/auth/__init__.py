"""``skillc serve`` as an OAuth 2.1 protected resource (the MCP authorization spec): bearer tokens
verified as JWTs or by introspection, each request bound to the caller its token names
(skillc.server.caller). docs/security.md, "Who is calling: identity and auth"."""
