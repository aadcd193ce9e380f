/**
 * Every method and path the two seeds name, as the seed writes it, and where it lives in our documents.
 * `path` is the document's path template; `seed` is the seed's wording (section in brackets) when it
 * differs or needs a mapping (prefix families, renamed routes, "not shown" methods).
 *
 * Kept by hand: when a seed names an endpoint, it goes here, and `seedOperations.test.ts` checks it.
 */
export interface SeedOperation {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'HEAD' | 'PATCH'
  path: string
  seed: string
}

/** Seed 000 — gateway, administration and paid storage. */
export const gatewaySeedOperations: readonly SeedOperation[] = [
  // §4.1 public set and §4.2 tier matrix: pages
  { method: 'GET', path: '/login', seed: 'GET /login [4.1, 4.2]' },
  { method: 'GET', path: '/public', seed: 'GET /public [4.2]' },
  { method: 'GET', path: '/docs.html', seed: 'GET /docs.html [4.1, 4.2]' },
  { method: 'GET', path: '/doc/', seed: 'GET /doc/ (prefix) [4.1, 4.2]' },
  { method: 'GET', path: '/autocore', seed: 'GET /autocore and /autocore/ (prefix) [4.1, 4.2]' },
  { method: 'GET', path: '/shadow-overlord', seed: 'GET /shadow-overlord [4.1, 4.2]' },
  { method: 'GET', path: '/feedback.html', seed: 'GET /feedback.html [4.2]' },
  { method: 'GET', path: '/feedback.txt', seed: 'GET /feedback.txt [4.2]' },
  { method: 'GET', path: '/journal', seed: 'GET /journal [4.2]' },
  { method: 'GET', path: '/dojo', seed: 'GET /dojo [4.2]' },
  { method: 'GET', path: '/boardroom', seed: 'GET /boardroom [4.2]' },
  { method: 'GET', path: '/book', seed: 'GET /book [4.2]' },
  { method: 'GET', path: '/cabinet/{co}', seed: 'GET /cabinet/ [4.2] = GET /cabinet/{co} [4.4]' },
  { method: 'GET', path: '/coreterm/', seed: 'GET /mindterm/ renamed /coreterm/ [4.2]' },
  { method: 'GET', path: '/insight/', seed: 'GET /insight/ [4.2]' },
  { method: 'GET', path: '/registry/', seed: 'GET /registry/ [4.2]' },
  { method: 'GET', path: '/storage/', seed: 'GET /storage/ [4.2]' },
  // §4.2 cost endpoints
  { method: 'POST', path: '/coordinator/tasks', seed: 'POST /coordinator/ [4.2] (designed sub-path /tasks)' },
  { method: 'POST', path: '/agents/{id}/evolve', seed: 'POST /agents/{id}/evolve [4.2]' },
  { method: 'POST', path: '/boardroom/convene', seed: 'POST /boardroom/convene [4.2]' },
  { method: 'POST', path: '/llm/chat', seed: 'POST /llm/chat [4.2]' },
  { method: 'POST', path: '/llm/completion', seed: 'POST /llm/completion [4.2]' },
  // §4.3 login (+ §4.1 /users/session/validate, method not shown: GET designed)
  { method: 'POST', path: '/users/challenge', seed: 'POST /users/challenge [4.1, 4.3]' },
  { method: 'POST', path: '/users/register-with-signature', seed: 'POST /users/register-with-signature [4.1, 4.3]' },
  { method: 'GET', path: '/users/session/validate', seed: '/users/session/validate [4.1] (method not shown; GET designed)' },
  { method: 'GET', path: '/users/{wallet}/permissions', seed: 'GET /users/{wallet}/permissions [4.1, 4.3]' },
  // §4.4 shadow-overlord administration
  { method: 'POST', path: '/admin/shadow/challenge', seed: 'POST /admin/shadow/challenge [4.4]' },
  { method: 'POST', path: '/admin/shadow/verify', seed: 'POST /admin/shadow/verify [4.4]' },
  { method: 'GET', path: '/admin/cabinet/{co}/preflight', seed: 'GET /admin/cabinet/{co}/preflight [4.4]' },
  { method: 'POST', path: '/admin/cabinet/{co}/provision', seed: 'POST /admin/cabinet/{co}/provision [4.4]' },
  { method: 'POST', path: '/admin/cabinet/{co}/clear', seed: 'POST /admin/cabinet/{co}/clear [4.4]' },
  { method: 'POST', path: '/vault/sign/{agent_id}', seed: 'POST /vault/sign/{agent_id} [4.4]' },
  { method: 'POST', path: '/admin/shadow/release-key/{agent_id}', seed: 'POST /admin/shadow/release-key/{agent_id} [4.4]' },
  { method: 'GET', path: '/cabinet', seed: 'GET /cabinet [4.4]' },
  { method: 'GET', path: '/cabinet.html', seed: 'GET /cabinet.html [4.4]' },
  { method: 'POST', path: '/vault/credentials/reunlock', seed: 'POST /vault/credentials/reunlock [3.4, 4.4]' },
  // §4.5 integration and monitoring
  { method: 'GET', path: '/health', seed: 'GET /health [4.5]' },
  { method: 'GET', path: '/health/detailed', seed: 'GET /health/detailed [4.5]' },
  { method: 'GET', path: '/agents', seed: '/agents... (list) [4.5]' },
  { method: 'GET', path: '/agents/{id}', seed: '/agents... (get) [4.5]' },
  { method: 'GET', path: '/docs', seed: 'GET /docs [4.5]' },
  { method: 'GET', path: '/api/monitoring/inbound', seed: 'GET /api/monitoring/inbound [4.5]' },
  { method: 'GET', path: '/api/admin/modelserver/models', seed: 'GET /api/admin/modelserver/models [4.5]' },
  { method: 'POST', path: '/marketplace/agent/call', seed: 'POST /marketplace/agent/call [4.5]' },
  { method: 'POST', path: '/marketplace/modelserver/ingest', seed: 'POST /marketplace/modelserver/ingest [4.5]' },
  { method: 'GET', path: '/marketplace/ceo/status', seed: 'GET /marketplace/ceo/status [4.5]' },
  { method: 'GET', path: '/insight/catalogue/recent', seed: 'GET /insight/catalogue/recent?kind=<kind>&h=true [4.5]' },
  // §4.6 paid storage
  { method: 'POST', path: '/store', seed: 'POST {base_url}/store [4.6]' },
]

/** Path prefixes and exact paths of seed 000 §4.1 that are not operations of the document. */
export const gatewaySeedPublicPrefixes = ['/doc/', '/autocore/', '/admin/shadow/', '/cms-json/', '/static/', '/css/', '/js/', '/img/'] as const
export const gatewaySeedPublicExactPaths = ['/favicon.ico'] as const

/**
 * The operations reachable without a session token, exactly (seed 000 §4.1 public set, §4.2 tier matrix,
 * the shadow tier that enforces its own bearer/signatures, and the designed decisions of docs/design.md).
 */
export const gatewayUngatedOperations: readonly string[] = [
  // seed §4.1 public set
  'GET /login',
  'GET /docs.html',
  'GET /doc/',
  'GET /autocore',
  'GET /shadow-overlord',
  'POST /admin/shadow/challenge',
  'POST /admin/shadow/verify',
  'POST /admin/shadow/release-key/{agent_id}',
  'POST /users/challenge',
  'POST /users/register-with-signature',
  'GET /users/session/validate',
  'GET /users/{wallet}/permissions',
  // seed §4.2: /public renders the login view client-side
  'GET /public',
  // seed §4.4 admin table: public roster and HTML shells (designed resolution of the table conflict)
  'GET /cabinet/{co}',
  'GET /cabinet',
  'GET /cabinet.html',
  // shadow tier: bearer enforced by the handlers, never a session
  'GET /admin/cabinet/{co}/preflight',
  'POST /admin/cabinet/{co}/provision',
  'POST /admin/cabinet/{co}/clear',
  'POST /vault/sign/{agent_id}',
  'POST /vault/credentials/reunlock',
  'GET /api/admin/modelserver/models',
  // paid storage: the payment is the authentication; status and receipts are public reads (designed)
  'POST /store',
  // designed: the MCP endpoint; its payment (or, for `chat`, a session or /llm key) is per tool
  'POST /mcp',
  'GET /store/quote',
  'GET /.well-known/x402',
  'GET /store/uploads/{upload_id}',
  'GET /store/receipts/{ar_tx_id}',
  // designed: x402 batch-settlement — the refund's payment is its authentication; claiming now takes the overlord bearer
  'GET /x402/batch-settlement/refund',
  'POST /x402/batch-settlement/claims',
  // designed: Prometheus scraping
  'GET /metrics',
  // designed: liveness probe of load balancers (liveness only, no data); /health/detailed stays gated
  'GET /health',
  // designed: the probes of load balancers and orchestrators (no data; readiness says only ready/starting/draining)
  'GET /health/live',
  'GET /health/ready',
  // designed: the site root, where a missing or rejected `from` lands (the public landing page)
  'GET /',
]

/** The gateway operationIds fixed in docs/design.md (handlers are keyed by them). */
export const gatewayDesignOperationIds: readonly string[] = [
  'getRootPage', 'getHealth', 'getHealthLive', 'getHealthReady', 'getHealthDetailed', 'getDocs', 'getDocsHtml', 'getDocIndex', 'getLoginPage', 'getPublicPage',
  'createLoginChallenge', 'registerWithSignature', 'validateSession', 'logout', 'getWalletPermissions',
  'createShadowChallenge', 'verifyShadowChallenge', 'getCabinetPreflight', 'provisionCabinet', 'clearCabinet', 'vaultSign',
  'releaseKey', 'reunlockVault', 'getCabinetRoster', 'getCabinetPage', 'getCabinetHtml', 'getShadowOverlordPage',
  'listAgents', 'getAgent', 'evolveAgent', 'getInboundMetrics', 'listModelServerModels', 'callMarketplaceAgent',
  'ingestModelServerPrompt', 'getCeoStatus', 'getRecentCatalogueEvents', 'getFeedbackPage', 'getFeedbackText',
  'getJournalPage', 'getDojoPage', 'getBoardroomPage', 'getBookPage', 'getCoretermPage', 'getInsightPage',
  'getRegistryPage', 'getStoragePage', 'createCoordinatorTask', 'conveneBoardroom',
  'llmChat', 'llmCompletion', 'testLlm', 'llmGenerate', 'getLlmUsage', 'listLlmKeys', 'createLlmKey', 'revokeLlmKey',
  'openAiChatCompletions', 'openAiCompletions', 'openAiEmbeddings', 'openAiModels', 'openAiResponses', 'anthropicMessages',
  // designed: MCP over Streamable HTTP
  'mcpCall',
  'coreAgentInteract', 'logCoreAgentMemory', 'searchCoreAgentMemories', 'storeFile', 'quoteStore', 'getX402Discovery', 'getUpload', 'getReceipt', 'getAutocorePage', 'getMetrics',
  // designed: the session pages' own reads and the feedback form
  'listMyUploads', 'getMyJournal', 'submitFeedback',
  // designed: x402 batch-settlement's refund and claim-now
  'refundBatchChannel', 'claimBatchVouchers',
]

/** Seed 001 — model server (Ollama API). */
export const modelServerSeedOperations: readonly SeedOperation[] = [
  { method: 'POST', path: '/api/generate', seed: 'POST /api/generate [4.1]' },
  { method: 'POST', path: '/api/chat', seed: 'POST /api/chat [4.2]' },
  { method: 'POST', path: '/api/embed', seed: 'POST /api/embed [4.3]' },
  { method: 'GET', path: '/api/ps', seed: 'GET /api/ps [4.4]' },
  { method: 'GET', path: '/api/version', seed: 'GET /api/version [4.4]' },
  { method: 'GET', path: '/api/tags', seed: 'GET /api/tags [4.5]' },
  { method: 'POST', path: '/api/show', seed: 'POST /api/show [4.5]' },
  { method: 'POST', path: '/api/create', seed: 'POST /api/create [4.5]' },
  { method: 'POST', path: '/api/copy', seed: 'POST /api/copy [4.5]' },
  { method: 'DELETE', path: '/api/delete', seed: 'DELETE /api/delete [4.5]' },
  { method: 'POST', path: '/api/pull', seed: 'POST /api/pull [4.5]' },
  { method: 'POST', path: '/api/push', seed: 'POST /api/push [4.5]' },
  { method: 'HEAD', path: '/api/blobs/{digest}', seed: 'HEAD /api/blobs/sha256:<digest> [4.5, 7]' },
  { method: 'POST', path: '/api/blobs/{digest}', seed: 'POST /api/blobs/sha256:<digest> [4.5, 7]' },
]

/** A concrete path per templated model-server seed entry, as the seed writes it. */
export const modelServerSeedSamplePaths: Readonly<Record<string, string>> = {
  '/api/blobs/{digest}': '/api/blobs/sha256:29fdb92e57cf0827ded04ae6461b5931d01fa595843f55d36f5b275a52087dd2',
}
