/** `POST /mcp`: its handler serves the MCP tools the app's built plug-ins contribute (`mcpCallOf`, composed in ../plugins.ts). */
export { mcpCallOf, type McpToolContributor } from './mcpCall.js'
