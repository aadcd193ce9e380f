/**
 * `npm start`: everything a newcomer needs, wired together.
 *
 * 0. First, before anything heavy is loaded: if an `npm start` already runs on this data directory
 *    (`<SERVICE_DATA_DIR>/in-use.json`, src/shared/dataDirLock/) — or a gateway on its own (`npm run serve`) —
 *    it says which, with its pid and ports,
 *    and exits 1; if a port it needs is taken it names the port, what needed it and, where /proc says, the
 *    process holding it, and exits 1 (scripts/start/preflight.ts). Either within a second or two.
 * 1. Unless the gateway is already configured (SERVICE_X402__FACILITATOR_URL set), starts the devnet in this
 *    process (devnet/startDevnet.ts: Anvil 8453 + 1 with USDC, facilitator, storage upstream, Arweave gateway,
 *    algod) and writes `<SERVICE_DATA_DIR>/devnet.json`.
 * 2. Starts the model server (src/modelserver/main.ts) and the gateway (src/main.ts) — each only if its file
 *    exists — as child processes (`node`: from the compiled `dist/` when `npm run build` made it after every
 *    source was last changed, otherwise through tsx; scripts/nodeArgsFor.ts), with the environment built from devnet.json using
 *    docs/design.md's names (the caller's own environment wins), output forwarded line by line with prefixes.
 *    That environment includes the daily receipt batch (`SERVICE_BATCH__RPC_URL`, `SERVICE_BATCH__ATTESTOR_KEY`)
 *    and the verifier's StorageAttest (`SERVICE_STORAGE__ATTEST_RPC_URL`, `SERVICE_STORAGE__ATTESTOR_KEY`): the
 *    service key, which deploys the contracts on local Base and holds ATTESTOR_ROLE. The deployment runs in the
 *    background and is not waited for: the gateway reads the addresses from `contracts-8453.json` when it
 *    attests or batches, and retries an attestation made before the file exists.
 *    It also turns on the shadow-overlord (admin) tier: `SHADOW_OVERLORD_ADDRESS` is the devnet overlord's
 *    TEST key and `SHADOW_JWT_SECRET` the devnet's (both kept in `<SERVICE_DATA_DIR>/devnet/`), and flow A's
 *    unlock proof (the overlord's signature over the gateway's unlock message, `{address, signature,
 *    message}`) is written to `SHADOW_UNLOCK_PROOF_PATH` (default `<SERVICE_DATA_DIR>/vault_unlock_proof.json`)
 *    on every start, so `POST /vault/credentials/reunlock` with a bearer and no body unlocks the vault. The
 *    vault is still sealed after each start, as everywhere. A caller-set `SHADOW_OVERLORD_ADDRESS` of another
 *    key wins, and then no proof is written. While its database has no cabinet `ACME`, the devnet overlord
 *    provisions one through the admin tier before the gateway starts (scripts/demoCabinet.ts), for /boardroom.
 *    A server is up once it said it listens on its port (scripts/reportListening.mjs, over IPC) and that port
 *    answers with a success: a port taken after the checks above is not mistaken for the server.
 *    If the gateway exits on its own, everything stops; the model server, if it crashes after its start, is started
 *    again (at most 5 times in 10 minutes; scripts/start/runStack.ts), each exit said with its code or signal.
 * 3. Ctrl-C / SIGTERM / SIGHUP stop the servers (SIGTERM, then SIGKILL after 5 s) and the devnet. If this
 *    process dies without stopping them (SIGKILL), the servers get SIGTERM from scripts/exitWithParent.mjs
 *    and, as a backstop, from a detached guardian that SIGKILLs whatever is left 5 s later; Anvil has its own
 *    watchdog. (The gateway itself exits on SIGTERM with its stdout gone — src/shared/logger.ts writes
 *    synchronously and drops output after EPIPE — so the guardian only covers a shutdown stuck elsewhere,
 *    e.g. in a native call of the model server.)
 *
 * 4. Once up, prints the conformance command against what it started; `--test-hooks` also opens the gateway's
 *    test hooks port (scripts/startTestHooks.ts) and the command uses it.
 *
 * Environment: SERVICE_DATA_DIR (default ./data), SERVICE_PORT (8000), MODELSERVER_PORT (11434),
 * DEVNET_PORT_OFFSET (every devnet port shifted by it), DEVNET_FREE_PORTS=1 (devnet peers on free ports),
 * DEVNET_BLOCK_INTERVAL_MS, DEVNET_ROUND_INTERVAL_MS (scripts/start/plan.ts).
 */
// first: on a Node line engines does not name, say so before a native module crashes the process
import './requireNode.mjs'
import { resolve } from 'node:path'
import { planFromEnv, plannedPorts } from './start/plan.js'
import { alreadyRunning, portsTaken, takenPorts } from './start/preflight.js'
import { releaseDataDirLock, takeDataDirLock } from '../src/shared/dataDirLock/dataDirLock.js'

const say = (line: string) => process.stdout.write(`[start] ${line}\n`)
const refuse = (lines: string[]): never => {
  for (const line of lines) say(line)
  process.exit(1)
}

const plan = (() => {
  try {
    return planFromEnv(process.env, resolve(import.meta.dirname, '..'))
  } catch (e) {
    return refuse([(e as Error).message])
  }
})()
const ports = plannedPorts(plan, process.env)
const lock = takeDataDirLock(plan.dataDir, 'npm start', ports)
if (!lock.taken) refuse(alreadyRunning(lock.holder))
else if (lock.stale) say(`the npm start that ran on this data directory before (pid ${lock.stale.pid}) ended without stopping; starting anew`)
const taken = await takenPorts(ports)
if (taken.length > 0) {
  releaseDataDirLock(plan.dataDir)
  refuse(portsTaken(taken))
}
// Only now the devnet, the servers and their libraries: a refusal above costs none of it.
const { runStack } = await import('./start/runStack.js')
await runStack(plan)
