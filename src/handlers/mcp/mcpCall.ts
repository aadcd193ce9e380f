import type { IncomingHttpHeaders } from 'node:http'
import { createMcpHandler, isLegacyRequest, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server'
import { createMcpServer } from '../../mcp/createMcpServer.js'
import { type McpCaller, type McpTool, McpTools, type McpToolPorts } from '../../mcp/McpTools.js'
import type { HttpResult } from '../../shared/http/index.js'
import { callerOf } from '../core/session.js'
import { errorsOf } from '../errorCatalogue.js'
import type { Handler, HandlerContext } from '../types.js'

const SERVER_VERSION = '1.0.0'

/**
 * `POST /mcp`: the thin adapter between the pipeline and the MCP SDK's HTTP entry (a `Request` in, a `Response`
 * out, so the answer goes back through the pipeline's response validation like any other). It serves both
 * protocol eras from one server definition: 2026-07-28 clients (stateless per-request envelope, `server/discover`,
 * cache hints on lists, results stamped with `resultType`) and 2025-11-25 clients (the SDK's stateless fallback:
 * `initialize` and every later POST answered by a fresh server). JSON answers only. The tools (src/mcp/) call the
 * services the HTTP routes call; each built domain plug-in contributes its tools (`mcpTools`), so the tools of
 * a domain left out are not listed.
 */
export function mcpCallOf(contributors: readonly McpToolContributor[]): Handler {
  return (ctx) => serveMcp(ctx, new McpTools(ctx.services.mcp.catalog, contributors.flatMap((toolsOf) => toolsOf(ctx)), portsOf(ctx)))
}

/** A domain's MCP tools over one request's context (`mcpTools` of its plug-in). */
export type McpToolContributor = (ctx: HandlerContext) => readonly McpTool[]

async function serveMcp(ctx: HandlerContext, tools: McpTools): Promise<HttpResult> {
  const caller = callerOf(ctx)
  const info: ServerInfo = {
    tools,
    caller: caller as McpCaller | undefined,
    clientAddress: ctx.ip,
    signal: ctx.signal,
    signIn: async (proof: unknown): Promise<McpCaller | undefined> => {
      const header = typeof proof === 'string' ? proof : Buffer.from(JSON.stringify(proof)).toString('base64')
      const session = await ctx.services.siwx.authenticate(header)
      return session ? { wallet: session.wallet, tier: 'session' } : undefined
    },
  }
  const request = new Request(`http://gateway${ctx.url}`, { method: ctx.method, headers: webHeaders(ctx.headers), signal: ctx.signal })
  const response = (await isLegacyRequest(request, ctx.body)) ? await serveLegacy(request, ctx.body, info) : await serveModern(request, ctx.body, info)
  const text = await response.text()
  const result: HttpResult = { status: response.status, headers: { 'Cache-Control': 'no-store' } }
  if (text !== '') result.body = JSON.parse(text)
  return result
}

type ServerInfo = Parameters<typeof createMcpServer>[1] & { tools: McpTools }

/** 2026-07-28: the SDK's per-request entry, strict (it answers the envelope's errors); the result as one JSON body. */
async function serveModern(request: Request, parsedBody: unknown, { tools, ...info }: ServerInfo): Promise<Response> {
  const handler = createMcpHandler(() => createMcpServer(tools, info, SERVER_VERSION), { legacy: 'reject' })
  try {
    return await handler.fetch(request, { parsedBody })
  } finally {
    await handler.close()
  }
}

/** 2025-11-25: one server and one stateless Streamable HTTP transport for this POST, answering with JSON. */
async function serveLegacy(request: Request, parsedBody: unknown, { tools, ...info }: ServerInfo): Promise<Response> {
  const server = createMcpServer(tools, info, SERVER_VERSION)
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
  await server.connect(transport)
  try {
    return await transport.handleRequest(request, { parsedBody })
  } finally {
    await server.close()
  }
}

function webHeaders(headers: IncomingHttpHeaders): Headers {
  const out = new Headers()
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue
    out.set(name, Array.isArray(value) ? value.join(', ') : value)
  }
  return out
}

/** What every tool call goes through: the rate limit and the app's error catalogue. */
function portsOf(ctx: HandlerContext): McpToolPorts {
  return { admit: admitToolCalls(ctx), describeError: (error) => errorsOf(ctx).toResult(error) }
}

/**
 * Each tool call of one `/mcp` request counts against the per-address rate limit like a request of its HTTP
 * twin: the first rides on the request's own count (the rate-limit stage took it), every further one takes
 * another. Without a limiter (an app built without the pipeline's) every call is let through.
 */
function admitToolCalls(ctx: HandlerContext): () => Promise<{ retryAfterS: number } | undefined> {
  let calls = 0
  return async () => {
    calls++
    const limiter = ctx.services.rateLimit
    if (calls === 1 || !limiter) return undefined
    const verdict = await limiter.take(ctx.ip)
    return verdict.allowed ? undefined : { retryAfterS: verdict.retryAfterS }
  }
}
