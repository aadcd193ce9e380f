// The import rule of src/ (docs/architecture.md draws it). Checked by `npm run lint:deps` in `npm test`;
// src/dependencyRule.test.ts shows it fails on an upward import. CommonJS because dependency-cruiser loads
// its configuration with require.
//
// Layers, top to bottom; a module imports its own layer's rooms or lower ones, never higher:
//   entry     src/main.ts, src/app.ts, src/pipeline/ (the HTTP stages app.ts composes), src/cli/
//   handlers  src/handlers/ (thin: validated request → one call of a service)
//   services  src/services/ (the one service graph: builds every domain and hands each what it needs)
//   domains   the rooms below (framework-free logic)
//   floor     src/shared/, src/db/, src/cache/, src/config/ (and generated/, the spec's types)
// The model server (src/modelserver/) is a second program: it shares only src/shared/ with the gateway.

const DOMAINS = [
  'auth', 'batch', 'cabinet', 'catalogue', 'cluster', 'cost', 'gate', 'health', 'journal', 'llm', 'marketplace',
  'mcp', 'modelserverClient', 'overlord', 'pages', 'shadow', 'storage', 'vault', 'x402',
]
const FLOOR = ['shared', 'db', 'cache', 'config']
const ENTRY = '^src/(main|app)[.]ts$|^src/(pipeline|cli)/'
const rooms = (names) => `^src/(${names.join('|')})/`
const TESTS = '[.]test[.]ts$'

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-devnet-in-src',
      comment: 'devnet/ holds the local peers of third-party services for tests and `npm run devnet`; src/ never imports it.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^devnet/' },
    },
    {
      name: 'no-test-code-in-src',
      comment: 'Test-only code lives in tests/support/; shipped src/ code never imports it (tests beside the code may).',
      severity: 'error',
      from: { path: '^src/', pathNot: TESTS },
      to: { path: '^(tests|scripts|conformance)/' },
    },
    {
      name: 'modelserver-apart',
      comment: 'The model server is its own program: it imports only its own folder and src/shared/.',
      severity: 'error',
      from: { path: '^src/modelserver/', pathNot: TESTS },
      to: { path: '^src/', pathNot: '^src/(modelserver|shared)/' },
    },
    {
      name: 'gateway-not-into-modelserver',
      comment: 'The gateway talks to the model server over HTTP (src/modelserverClient/), never by importing it.',
      severity: 'error',
      from: { path: '^src/', pathNot: `^src/modelserver/|${TESTS}` },
      to: { path: '^src/modelserver/' },
    },
    {
      name: 'shared-is-the-floor',
      comment: 'src/shared/ is used by both programs and imports no room of either.',
      severity: 'error',
      from: { path: '^src/shared/', pathNot: TESTS },
      to: { path: '^src/', pathNot: '^src/shared/' },
    },
    {
      name: 'floor-not-up',
      comment: 'db, cache and config sit under every domain: they import only each other and src/shared/.',
      severity: 'error',
      from: { path: rooms(['db', 'cache', 'config']), pathNot: TESTS },
      to: { path: '^src/', pathNot: rooms(FLOOR) },
    },
    {
      name: 'domains-not-up',
      comment: 'A domain is framework-free: it never imports the service graph, a handler, a pipeline stage or an entry point.',
      severity: 'error',
      from: { path: rooms(DOMAINS), pathNot: TESTS },
      to: { path: `^src/(services|handlers)/|${ENTRY}` },
    },
    {
      name: 'services-not-up',
      comment: 'The service graph is built apart from the HTTP wiring: no handler, stage or entry point.',
      severity: 'error',
      from: { path: '^src/services/', pathNot: TESTS },
      to: { path: `^src/handlers/|${ENTRY}` },
    },
    {
      name: 'handlers-not-up',
      comment: 'Handlers are called by the pipeline; they import neither a stage nor an entry point.',
      severity: 'error',
      from: { path: '^src/handlers/', pathNot: TESTS },
      to: { path: ENTRY },
    },
    {
      name: 'rooms-known',
      comment: 'Every top-level folder of src/ has a place in the layers above (add a new room to this file and to docs/architecture.md).',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/[^/]+/', pathNot: `${rooms([...DOMAINS, ...FLOOR, 'services', 'handlers', 'pipeline', 'cli', 'modelserver'])}` },
    },
    // One way between rooms of one layer: the direction each pair is allowed to run (the other is a cycle).
    {
      name: 'shadow-tier-one-way',
      comment: 'shadow → cabinet → vault → overlord: the tier shares its error and signature check through src/overlord/.',
      severity: 'error',
      from: { path: '^src/(vault|cabinet|overlord)/', pathNot: TESTS },
      to: { path: '^src/shadow/' },
    },
    {
      name: 'overlord-is-the-shadow-floor',
      severity: 'error',
      from: { path: '^src/overlord/', pathNot: TESTS },
      to: { path: '^src/(shadow|cabinet|vault)/' },
    },
    {
      name: 'vault-below-cabinet',
      severity: 'error',
      from: { path: '^src/vault/', pathNot: TESTS },
      to: { path: '^src/cabinet/' },
    },
    {
      name: 'batch-not-into-storage',
      comment: 'storage → batch (it attests through the chain clients of batch); the service graph hands batch its upstream uploader.',
      severity: 'error',
      from: { path: '^src/batch/', pathNot: TESTS },
      to: { path: '^src/storage/' },
    },
    {
      name: 'only-the-meter-reaches-the-model-server',
      comment:
        'Every call that makes the model server generate or embed is metered (quota, cap, count, usage ledger, settlement): only the meter (src/cost/meter/) imports the model-server client; every other room reaches the model server through the meter’s API (src/cost/meter/index.ts), per call.',
      severity: 'error',
      from: { path: '^src/', pathNot: `^src/(cost/meter|modelserverClient)/|${TESTS}` },
      to: { path: '^src/modelserverClient/' },
    },
    {
      name: 'modelserver-client-is-a-floor',
      comment: 'The model-server client, pool and NDJSON reader are used by the meter alone and import no room.',
      severity: 'error',
      from: { path: '^src/modelserverClient/', pathNot: TESTS },
      to: { path: '^src/', pathNot: `^src/modelserverClient/|${rooms(FLOOR)}` },
    },
    {
      name: 'marketplace-not-into-llm',
      comment: '/llm (src/llm/) builds on the marketplace; the marketplace never imports it.',
      severity: 'error',
      from: { path: '^src/marketplace/', pathNot: TESTS },
      to: { path: '^src/llm/' },
    },
    {
      name: 'no-circular-rooms',
      comment: 'No cycle between the rooms (top-level folders) of src/.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/[^/]+$' },
      to: { path: '^src/[^/]+$', circular: true },
    },
    {
      name: 'no-circular',
      comment: 'No cycle between modules of shipped code (a type-only import runs nothing, so it makes no cycle at load).',
      severity: 'error',
      from: { path: '^src/', pathNot: TESTS },
      to: { circular: true, dependencyTypesNot: ['type-only'], viaOnly: { pathNot: TESTS, dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    doNotFollow: { path: ['node_modules', '^generated/'] },
    // Tests beside the code are left out of the graph: they compose whatever they exercise (a model server as the
    // gateway's peer, the app around a handler), and the rule is about what the shipped code imports.
    exclude: { path: ['^node_modules', '^dist/', '^data/', TESTS] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.js', '.mjs', '.cjs', '.json', '.d.ts'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
}
