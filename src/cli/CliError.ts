/**
 * A failure the CLI reports: one line on stderr (or `{"error": code, "message"}` on stdout with `--json`)
 * and a documented exit code, so scripts can tell the failures apart.
 */
import { type ErrorBody, errorBodyOf } from './errorBody.js'

export const EXIT = {
  ok: 0,
  /** The server answered an error not listed below (4xx/5xx). */
  server: 1,
  /** Bad arguments or input (unreadable or empty file, malformed id). Commander's own usage errors too. */
  usage: 2,
  /** The server could not be reached. */
  unreachable: 3,
  /** The 402 offers nothing this client can pay (no requirement on the chosen rail, no key). */
  notPayable: 4,
  /** The payer's balance does not cover the price. */
  insufficientFunds: 5,
  /** The thing asked for does not exist (receipt, model). */
  notFound: 6,
  /** `verify`: the stored bytes or the proof do not match the receipt. */
  verifyFailed: 7,
  /**
   * `store`: the payment was sent but no result came back (the connection was lost and sending the same payment
   * again got none, or the paid upload is still queued). It may have been taken: check the wallet's uploads
   * before storing again.
   */
  paymentUnknown: 8,
} as const

export type ExitCode = (typeof EXIT)[keyof typeof EXIT]

export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message)
  }
}

/**
 * The message as one line for a person: a server's message can carry a multi-line dump (a contract call's
 * details, a stack), which would bury what went wrong; its first line is kept and the rest marked `…`.
 * `--json` keeps the whole message.
 */
export function oneLine(message: string): string {
  const lines = message.trim().split(/\r?\n/)
  return lines.length > 1 ? `${lines[0]!.trimEnd()} …` : lines[0]!
}

/** What the CLI talks to, so a connection failure can say what to start. */
export type Service = 'gateway' | 'modelserver' | 'arweave'

const HINTS: Record<Service, string> = {
  gateway: 'is the gateway running? start it with `npm start` (or pass --gateway)',
  modelserver: 'is the model server running? start it with `npm start` or `npm run modelserver` (or pass --host)',
  arweave: 'is the Arweave gateway running? `npm start` starts a local one (or pass --arweave)',
}

const REASONS = new Map([
  ['ECONNREFUSED', 'connection refused'],
  ['ENOTFOUND', 'host not found'],
  ['ECONNRESET', 'connection reset'],
  ['ETIMEDOUT', 'timed out'],
  ['EHOSTUNREACH', 'host unreachable'],
])

/** The reason of a fetch or socket failure in words (undici hides it in `cause`). */
function reasonOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause
  const why = cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error))
  return REASONS.get(why) ?? why
}

/** The server could not be reached: nothing of the request got to it. */
export class UnreachableError extends CliError {
  constructor(
    readonly url: string,
    /** Why, in words (`connection refused`). */
    readonly reason: string,
    message: string,
  ) {
    super('server_unreachable', message, EXIT.unreachable)
  }
}

/**
 * Turns a fetch failure into `unreachable`, naming the URL and the reason, and saying what to do about it.
 */
export function unreachable(url: string, error: unknown, service?: Service, hint?: string): UnreachableError {
  const reason = reasonOf(error)
  const advice = hint ?? (service ? HINTS[service] : undefined)
  return new UnreachableError(url, reason, `cannot reach ${url} (${reason})${advice ? ` — ${advice}` : ''}`)
}

/**
 * A connection lost after the request started (its headers on their way): unlike `unreachable`, the server may
 * have read the request and acted on it. Reported as `unreachable` unless the caller knows better — `store`
 * does for its paid request, whose payment may have been taken.
 */
export class RequestLostError extends CliError {
  constructor(
    readonly url: string,
    /** Why, in words (`connection reset`, `socket hang up`). */
    readonly reason: string,
    service?: Service,
  ) {
    super('server_unreachable', unreachable(url, new Error(reason), service).message, EXIT.unreachable)
  }
}

/** `RequestLostError` from a socket failure. */
export function requestLost(url: string, error: unknown, service?: Service): RequestLostError {
  return new RequestLostError(url, reasonOf(error), service)
}

/** Reads an error body (`errorBody.ts`: the spec's, the gate's, OpenAI's) or text from a failed response. */
export async function httpError(res: Response, what: string): Promise<CliError> {
  const text = await res.text().catch(() => '')
  let said: ErrorBody = { code: undefined, message: undefined }
  try {
    said = errorBodyOf(JSON.parse(text))
  } catch {
    /* not JSON */
  }
  const message = said.message ?? said.code ?? (text.slice(0, 300) || res.statusText)
  const exit = res.status === 404 ? EXIT.notFound : res.status === 400 || res.status === 413 || res.status === 415 ? EXIT.usage : EXIT.server
  return new CliError(said.code ?? `http_${res.status}`, `${what} answered ${res.status}: ${message}`, exit)
}

/** fetch with `unreachable` on a connection failure. */
export async function request(url: string, init?: RequestInit, service?: Service): Promise<Response> {
  try {
    return await fetch(url, init)
  } catch (error) {
    throw unreachable(url, error, service)
  }
}

/** Why a file could not be read, in words (`no such file`), its code kept in brackets for a search (`ENOENT`). */
export function fileReadFailure(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException
  const words = code === undefined ? undefined : FILE_ERRORS.get(code)
  return words ? `${words} (${code})` : (code ?? message)
}

const FILE_ERRORS: ReadonlyMap<string, string> = new Map([
  ['ENOENT', 'no such file'],
  ['EACCES', 'permission denied'],
  ['EPERM', 'not permitted'],
  ['EISDIR', 'a directory, not a file'],
  ['ENOTDIR', 'a part of the path is not a directory'],
])
