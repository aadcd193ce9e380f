/** The request envelope MCP 2026-07-28 carries in `_meta` on every handshake-free request. */
export const MCP_2026_ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
}

/**
 * A raw, handshake-free MCP 2026-07-28 request to `${url}/mcp`, as a client without an SDK sends it: the method
 * (and the tool's name) in headers, the envelope in `_meta`.
 */
export function mcpRawPost(url: string): (method: string, params?: Record<string, unknown>) => Promise<Response> {
  return (method, params = {}) =>
    fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}) },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: MCP_2026_ENVELOPE } }),
    })
}
