/**
 * `pay2store`: the command-line client (commander). Commands: `store` (rails base, ethereum, algorand), `receipt`, `verify`, `login`,
 * `uploads`, and `models list|ps|show|pull|push|create|cp|rm|run` against any model server. `--json` prints one JSON document
 * (errors too: `{"error", "message"}`), `--help` works on every command. Exit codes are `EXIT` in
 * CliError.ts: 0 ok, 1 server error, 2 usage or bad input, 3 server unreachable, 4 not payable,
 * 5 insufficient funds, 6 not found, 7 verification failed, 8 paid upload's outcome unknown.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander'
import { CliError, EXIT, oneLine } from './CliError.js'
import { formatAmount, unitOfRequirement } from './formatAmount.js'
import { createOutput } from './output.js'
import { closeAllBars } from './progress.js'
import { protectStorageIds } from './protectStorageIds.js'
import { clientRailFor, clientRailOptions } from '../x402/rails/clientRails.js'
import { RAILS, SIGN_IN_RAIL } from './rails.js'
import type { StoreFlags } from './store.js'
import { arweaveChoice } from './devnetFile.js'

// Each command's module is loaded when that command runs, so `--help` or `receipt` does not load the payment
// and chain libraries `store` needs: a CLI call costs only what its command uses.
const commands = {
  store: () => import('./store.js'),
  receipt: () => import('./receipt.js'),
  login: () => import('./login.js'),
  models: () => import('./models.js'),
}

const env = process.env
const DEFAULT_GATEWAY = env.PAY2STORE_URL?.trim() || 'http://127.0.0.1:8000'
/**
 * An `http(s)://` URL option, refused as a usage error (exit 2) otherwise: `localhost:8000` reached Node as the
 * protocol `localhost:` (its own message, exit 1).
 */
function httpUrl(value: string): string {
  let url: URL | undefined
  try {
    url = new URL(value)
  } catch {
    url = undefined
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new InvalidArgumentError(`expected an http:// or https:// URL, e.g. http://${value.replace(/^[a-z]+:\/\//i, '')}`)
  }
  return value
}

const DEFAULT_ARWEAVE = env.PAY2STORE_ARWEAVE_URL?.trim() || 'http://127.0.0.1:8404'
const DEFAULT_HOST = env.OLLAMA_HOST?.trim() ? (/^https?:\/\//.test(env.OLLAMA_HOST.trim()) ? env.OLLAMA_HOST.trim() : `http://${env.OLLAMA_HOST.trim()}`) : 'http://127.0.0.1:11434'

type Json = { json?: boolean }
const STORAGE_ID_HELP = 'the storage id `store` printed (43 base64url characters)'
const jsonOption = () => new Option('--json', 'print one JSON document (for scripts)')
/** The key options of the rails the command may pay on (each rail's client side names its own), and `--devnet`. */
const keyOptions = (c: Command, rails: 'every' | 'sign-in' = 'every') => {
  const signIn = clientRailFor(RAILS.get(SIGN_IN_RAIL) ?? '')
  for (const option of rails === 'every' ? clientRailOptions() : (signIn?.options ?? [])) c.option(option.flags, option.description, option.default?.(env))
  return c.option('--devnet [file]', 'use the first funded payer of a devnet.json (npm start writes data/devnet.json)')
}

export function buildProgram(): Command {
  const program = new Command('pay2store')
    .description('Store files permanently, paid with x402, and manage models on an Ollama-compatible model server.')
    .version('1.0.0')
    .showHelpAfterError('(add --help for usage)')
  addStoreCommands(program)
  addModelCommands(program.command('models').description('manage models on an Ollama-compatible model server (like the ollama CLI)'))
  return program
}

/** `store`, `receipt`, `verify`, `login` and `uploads`: the gateway's paid storage and its sign-in. */
function addStoreCommands(program: Command): void {
  keyOptions(
    program
      .command('store')
      .description('store a file: read the 402 quote, pay it on the chosen rail, upload, print its storage id, the receipt and the Arweave link')
      .argument('<file>', 'file to store')
      .option('--gateway <url>', 'pay2store gateway ($PAY2STORE_URL)', httpUrl, DEFAULT_GATEWAY)
      .addOption(new Option('--rail <rail>', 'payment rail').choices([...RAILS.keys()]).default(SIGN_IN_RAIL))
      .option('--arweave <url>', "Arweave gateway for the link ($PAY2STORE_ARWEAVE_URL; with --devnet, that devnet's)", DEFAULT_ARWEAVE)
      .option('--tag-app <name>', 'App-Name tag of the stored item (X-SVC-Tag-App)')
      .option('--max-usd <amount>', 'largest payment the client may sign, in USD (stock default: 1)')
      .option('--paid-retry <seconds>', 'after the connection of the paid upload is lost, send the same payment again for this long (it cannot be charged twice)', '120')
      .option('--idle-timeout <seconds>', 'give a request to the gateway up after this long without a byte either way ($PAY2STORE_IDLE_TIMEOUT; 0: never); a paid one is then sent again as a lost connection is', env.PAY2STORE_IDLE_TIMEOUT?.trim() || '180')
      .addOption(jsonOption()),
  ).action(async (file: string, o: StoreFlags & Json, command: Command) => {
    const out = createOutput(!!o.json)
    const { store } = await commands.store()
    const r = await store(file, { ...o, arweave: arweaveChoice(o, command) }, out)
    out.result(r, (v) =>
      [
        `stored ${file} (${v.sizeBytes} bytes)`,
        `storage id   ${v.arTxId}`,
        `sha256       ${v.sha256}`,
        `paid         ${formatAmount(v.amountAtomic, unitOfRequirement(v.network, v.asset), v.asset)} on ${v.network}`,
        `payer        ${v.payer}`,
        `link         ${v.arweaveUrl}`,
        ...(v.warning ? [`warning      ${v.warning}`] : []),
      ].join('\n'),
    )
  })

  program
    .command('receipt')
    .description('print the receipt of a stored item (and its Merkle proof once batched)')
    .argument('<storage-id>', STORAGE_ID_HELP)
    .option('--gateway <url>', 'pay2store gateway ($PAY2STORE_URL)', httpUrl, DEFAULT_GATEWAY)
    .addOption(jsonOption())
    .action(async (id: string, o: { gateway: string } & Json) => {
      const out = createOutput(!!o.json)
      const { fetchReceipt, describeReceipt } = await commands.receipt()
      out.result(await fetchReceipt(o.gateway, id), describeReceipt)
    })

  program
    .command('verify')
    .description("check a stored item: the Arweave bytes hash to the receipt's SHA-256 and size, and the receipt's Merkle proof leads to its batch root")
    .argument('<storage-id>', STORAGE_ID_HELP)
    .option('--gateway <url>', 'pay2store gateway ($PAY2STORE_URL)', httpUrl, DEFAULT_GATEWAY)
    .option('--arweave <url>', 'Arweave gateway serving the bytes ($PAY2STORE_ARWEAVE_URL)', DEFAULT_ARWEAVE)
    .option('--devnet [file]', "read the bytes from that devnet's Arweave gateway (npm start writes data/devnet.json)")
    .addOption(jsonOption())
    .action(async (id: string, o: { gateway: string; arweave: string; devnet?: string | boolean } & Json, command: Command) => {
      const out = createOutput(!!o.json)
      const { verify } = await commands.receipt()
      out.result(await verify(o.gateway, arweaveChoice(o, command), id), (v) => [`ok: the ${v.sizeBytes} bytes on Arweave match the receipt`, `sha256   ${v.sha256}`, `proof    ${v.proof}`, ...(v.root ? [`root     ${v.root}`] : [])].join('\n'))
    })

  keyOptions(
    program
      .command('login')
      .description('sign in with the wallet key (EIP-4361) and print a session token for X-Session-Token')
      .option('--gateway <url>', 'pay2store gateway ($PAY2STORE_URL)', httpUrl, DEFAULT_GATEWAY)
      .addOption(jsonOption()),
    'sign-in',
  ).action(async (o: { gateway: string; devnet?: string | boolean } & Json) => {
    const out = createOutput(!!o.json)
    const { login } = await commands.login()
    out.result(await login(o.gateway, o), (v) => v.session_token)
  })

  keyOptions(
    program
      .command('uploads')
      .description("sign in with the wallet key (EIP-4361, no payment) and list the wallet's paid uploads, newest first, with their storage ids")
      .option('--gateway <url>', 'pay2store gateway ($PAY2STORE_URL)', httpUrl, DEFAULT_GATEWAY)
      .option('--limit <n>', 'most uploads to list (1–200)', '20')
      .addOption(jsonOption()),
    'sign-in',
  ).action(async (o: { gateway: string; limit: string; devnet?: string | boolean } & Json) => {
    const out = createOutput(!!o.json)
    const { uploads, describeUploads } = await commands.login()
    out.result(await uploads(o.gateway, o, Number(o.limit)), describeUploads)
  })
}

/** `models …`: the ollama CLI's commands against a model server. */
function addModelCommands(m: Command): void {
  const host = (c: Command) => c.option('--host <url>', 'model server ($OLLAMA_HOST)', DEFAULT_HOST).addOption(jsonOption())
  host(m.command('list').alias('ls').description('list installed models')).action(async (o: { host: string } & Json) => (await commands.models()).list(o.host, createOutput(!!o.json)))
  host(m.command('ps').description('list loaded models')).action(async (o: { host: string } & Json) => (await commands.models()).ps(o.host, createOutput(!!o.json)))
  host(m.command('show').description('show a model').argument('<model>')).action(async (model: string, o: { host: string } & Json) => (await commands.models()).show(o.host, model, createOutput(!!o.json)))
  for (const kind of ['pull', 'push'] as const) {
    host(m.command(kind).description(`${kind} a model ${kind === 'pull' ? 'from' : 'to'} a registry, with a progress bar per layer`).argument('<model>').option('--insecure', 'allow a plain-HTTP registry')).action(
      async (model: string, o: { host: string; insecure?: boolean } & Json) => (await commands.models()).transfer(kind, o.host, model, !!o.insecure, createOutput(!!o.json)),
    )
  }
  host(
    m
      .command('create')
      .description('import a local GGUF file as a model (offline): uploads it as a blob, then creates the model')
      .argument('<model>', 'name of the new model, e.g. my-model:latest')
      .requiredOption('--from <file>', 'the GGUF file'),
  ).action(async (model: string, o: { host: string; from: string } & Json) => (await commands.models()).create(o.host, model, o.from, createOutput(!!o.json)))
  host(m.command('cp').description('copy a model').argument('<source>').argument('<destination>')).action(async (s: string, d: string, o: { host: string } & Json) => (await commands.models()).cp(o.host, s, d, createOutput(!!o.json)))
  host(m.command('rm').description('remove a model').argument('<model>')).action(async (model: string, o: { host: string } & Json) => (await commands.models()).rm(o.host, model, createOutput(!!o.json)))
  host(
    m
      .command('run')
      .description('chat with a model: the reply streams as it is generated')
      .argument('<model>')
      .argument('<prompt...>', 'the message')
      .option('--seed <n>', 'sampling seed', (v) => Number.parseInt(v, 10))
      .option('--num-predict <n>', 'most tokens to generate', (v) => Number.parseInt(v, 10)),
  ).action(async (model: string, prompt: string[], o: { host: string; seed?: number; numPredict?: number } & Json) =>
    (await commands.models()).run(o.host, model, prompt.join(' '), { seed: o.seed, numPredict: o.numPredict }, createOutput(!!o.json)),
  )
}

/** Runs the CLI; returns the exit code (the caller exits). */
export async function main(argv: string[]): Promise<number> {
  const program = buildProgram()
  const all = [program, ...program.commands, ...program.commands.flatMap((c) => c.commands)]
  for (const c of all) c.exitOverride()
  const wantsJson = argv.includes('--json')
  try {
    await program.parseAsync(protectStorageIds(argv), { from: 'user' })
    return EXIT.ok
  } catch (error) {
    closeAllBars() // before the message, so it lands below the bars, never inside one
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return EXIT.ok
      return EXIT.usage // commander already printed the message
    }
    const e = error instanceof CliError ? error : new CliError('internal_error', error instanceof Error ? error.message : String(error), EXIT.server)
    if (wantsJson) process.stdout.write(`${JSON.stringify({ error: e.code, message: e.message, exitCode: e.exitCode })}\n`)
    else process.stderr.write(`pay2store: ${oneLine(e.message)}\n`)
    return e.exitCode
  } finally {
    closeAllBars() // no bar outlives its command: a live bar's timer would keep the process from exiting
  }
}

if (import.meta.url === `file://${process.argv[1]}` || process.env.PAY2STORE_CLI_MAIN === '1') {
  process.exitCode = await main(process.argv.slice(2))
}
