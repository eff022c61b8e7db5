// The official TypeScript MCP client against a running `skillc serve`:
// node mcp_client.mjs URL  ->  one JSON document on stdout (tools, a searchDrinks call, a ui:// read).
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'

const url = new URL(process.argv[2])
const client = new Client({ name: 'skillc-test-ts', version: '1.0.0' })
const transport = new StreamableHTTPClientTransport(url)
await client.connect(transport)
const out = { protocolVersion: transport.protocolVersion ?? null, server: client.getServerVersion() }
const tools = await client.listTools()
out.tools = tools.tools.map((t) => ({ name: t.name, annotations: t.annotations, meta: t._meta ?? null }))
const call = await client.callTool({ name: 'searchDrinks', arguments: { keyword: 'latte' } })
out.call = {
  isError: call.isError ?? false,
  text: call.content.map((b) => b.text).join('\n'),
  total: call.structuredContent?.total,
  metaKeys: Object.keys(call._meta ?? {}).sort(),
}
const bad = await client.callTool({ name: 'searchDrinks', arguments: { limit: 0 } })
out.bad = { isError: bad.isError ?? false, text: bad.content.map((b) => b.text).join('\n') }
const uri = out.tools.find((t) => t.name === 'searchDrinks').meta.ui.resourceUri
const read = await client.readResource({ uri })
out.resource = { uri, mimeType: read.contents[0].mimeType, length: read.contents[0].text.length, meta: read.contents[0]._meta ?? null }
await client.close()
process.stdout.write(JSON.stringify(out))
