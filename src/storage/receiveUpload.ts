import { createHash, randomUUID } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { Transform, Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import busboy from 'busboy'
import { EmptyBodyError, InvalidMultipartError, PayloadTooLargeError } from './errors.js'
import { MultipartFieldTooLargeError, MultipartTooManyPartsError, UploadTooSlowError } from './intake/errors.js'

/** What the service learns of a file without keeping it: enough for the 402 (size, SHA-256, type). */
export type MeasuredUpload = {
  sha256: string
  sizeBytes: bigint
  mimeType: string
  filename: string | undefined
}

export type ReceivedUpload = MeasuredUpload & {
  /** Temp file holding the bytes; the caller moves or deletes it. */
  path: string
}

export type ReceiveUploadOptions = {
  tmpDir: string
  maxBytes: bigint
  /** The refusal above `maxBytes` (default 413 `payload_too_large`). */
  tooLarge?: (maxBytes: bigint) => Error
  /** Multipart field carrying the file (default `file`). */
  field?: string
  /** Bounds of the rest of the multipart body (default: busboy's, i.e. unbounded part count). */
  limits?: { maxParts: number; maxFieldBytes: number }
  /**
   * A sender slower than `bytesPerSecond` over any `windowMs` is refused (408 `upload_too_slow`) — the
   * caller then answers and cuts it. 0 = off.
   */
  minRate?: { bytesPerSecond: number; windowMs: number }
}

type IncomingLike = Readable & { headers: Record<string, string | string[] | undefined> }

/** Multipart framing adds a few hundred bytes per part; a body this far above the file limit is refused. */
export const FRAMING_ALLOWANCE = 1_048_576n

/**
 * Streams the `file` field of a multipart request to a temp file, hashing it on the way: memory stays
 * bounded by the stream buffers whatever the file size. Empty → 400 `empty body`; above `maxBytes` → 413.
 */
export async function receiveUpload(req: IncomingLike, options: ReceiveUploadOptions): Promise<ReceivedUpload> {
  await mkdir(options.tmpDir, { recursive: true })
  const path = join(options.tmpDir, `upload-${randomUUID()}`)
  const measured = await readUpload(req, options, { open: () => createWriteStream(path), discard: () => rm(path, { force: true }) })
  return { ...measured, path }
}

/**
 * The same reading as `receiveUpload`, but the bytes are only counted and hashed, never written: what a
 * request without a (pre-checked) payment costs — no disk, no upload slot.
 */
export function measureUpload(req: IncomingLike, options: Omit<ReceiveUploadOptions, 'tmpDir'>): Promise<MeasuredUpload> {
  return readUpload(req, options, undefined)
}

type Sink = { open: () => Writable; discard: () => Promise<void> }

/** Where measured bytes go: nowhere. */
const discard = () =>
  new Writable({
    write(_chunk, _enc, cb) {
      cb()
    },
  })

/** busboy over the request, bounded to one file of at most `maxBytes` and, with `limits`, the other parts too. */
function multipartParser(req: IncomingLike, maxBytes: bigint, limits: ReceiveUploadOptions['limits']): busboy.Busboy {
  try {
    return busboy({
      headers: req.headers as busboy.BusboyConfig['headers'],
      limits: {
        files: 1,
        fileSize: maxBytes > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(maxBytes) + 1,
        // busboy marks a field truncated once it reaches its limit: one byte more lets exactly the maximum through
        ...(limits ? { parts: limits.maxParts, fields: limits.maxParts, fieldSize: limits.maxFieldBytes + 1, fieldNameSize: 200, headerPairs: 32 } : {}),
      },
    })
  } catch (cause) {
    throw new InvalidMultipartError('request must be multipart/form-data with a file field `file`', cause)
  }
}

/** The file part, hashed and counted on its way to the sink (or nowhere); refused once it passes `maxBytes`. */
function measureFile(stream: Readable, info: busboy.FileInfo, maxBytes: bigint, tooLarge: (max: bigint) => Error, sink: Sink | undefined, signal: AbortSignal): Promise<MeasuredUpload> {
  const hash = createHash('sha256')
  let size = 0n
  let over = false
  const meter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      size += BigInt(chunk.length)
      if (size > maxBytes) {
        over = true
        cb(tooLarge(maxBytes))
        return
      }
      hash.update(chunk)
      cb(null, chunk)
    },
  })
  return pipeline(stream, meter, sink ? sink.open() : discard(), { signal }).then(() => {
    if (over || (stream as Readable & { truncated?: boolean }).truncated) throw tooLarge(maxBytes)
    return { sha256: hash.digest('hex'), sizeBytes: size, mimeType: info.mimeType || 'application/octet-stream', filename: info.filename }
  })
}

async function readUpload(req: IncomingLike, options: Omit<ReceiveUploadOptions, 'tmpDir'>, sink: Sink | undefined): Promise<MeasuredUpload> {
  const { maxBytes, field = 'file', limits, minRate } = options
  const tooLarge = options.tooLarge ?? ((max: bigint) => new PayloadTooLargeError(max))
  const declared = Number(req.headers['content-length'])
  // Multipart framing adds a few hundred bytes; anything declared far above the limit is refused unread
  // (the caller bounds the unread body: boundUnreadBody).
  if (Number.isFinite(declared) && BigInt(Math.trunc(declared)) > maxBytes + FRAMING_ALLOWANCE) throw tooLarge(maxBytes)
  const parser = multipartParser(req, maxBytes, limits)

  return new Promise<MeasuredUpload>((resolve, reject) => {
    let settled = false
    let fileSeen = false
    let writing: Promise<MeasuredUpload> | undefined
    // ends the file's pipeline when the request is refused part-way, so its file is closed before it is removed
    const abandon = new AbortController()
    // Every byte of the body counts (the other parts too), so the whole body is bounded, not only the file.
    let total = 0n
    let inWindow = 0
    const onData = (chunk: Buffer) => {
      total += BigInt(chunk.length)
      inWindow += chunk.length
      if (total > maxBytes + FRAMING_ALLOWANCE) fail(tooLarge(maxBytes))
    }
    const watchdog =
      minRate && minRate.bytesPerSecond > 0
        ? setInterval(() => {
            const needed = (minRate.bytesPerSecond * minRate.windowMs) / 1000
            if (inWindow < needed && !(req as { complete?: boolean }).complete) fail(new UploadTooSlowError(minRate.bytesPerSecond, minRate.windowMs / 1000, inWindow))
            inWindow = 0
          }, minRate.windowMs)
        : undefined
    const stop = () => {
      if (watchdog) clearInterval(watchdog)
      req.off('data', onData)
    }
    const fail = (error: unknown) => {
      if (settled) return
      settled = true
      stop()
      req.unpipe(parser)
      // the caller answers; boundUnreadBody decides how much more of the body is read
      abandon.abort(error)
      // removed once its pipeline has let go of it: a file still being opened or written would outlive the removal
      void (writing ?? Promise.resolve()).catch(() => undefined).then(() => sink?.discard())
      reject(error)
    }

    parser.on('file', (name, stream, info) => {
      if (name !== field || fileSeen) {
        stream.resume()
        return
      }
      fileSeen = true
      writing = measureFile(stream, info, maxBytes, tooLarge, sink, abandon.signal)
      writing.catch(fail)
    })
    // One file per request (busboy's `files: 1`): the quote, the payment and the receipt are for one item, and a
    // second file part would be dropped unsaid.
    parser.on('filesLimit', () => fail(new InvalidMultipartError('more than one file part: store one file per request')))
    parser.on('field', (_name, _value, info) => {
      if (limits && info.valueTruncated) fail(new MultipartFieldTooLargeError(limits.maxFieldBytes))
    })
    if (limits) {
      const tooMany = () => fail(new MultipartTooManyPartsError(limits.maxParts))
      parser.on('partsLimit', tooMany)
      parser.on('fieldsLimit', tooMany)
    }
    parser.on('error', (error) => fail(new InvalidMultipartError('malformed multipart body', error)))
    parser.on('close', () => {
      if (settled) return
      if (!writing) {
        fail(new InvalidMultipartError('missing file field `file`'))
        return
      }
      writing.then(
        (result) => {
          if (settled) return
          if (result.sizeBytes === 0n) {
            fail(new EmptyBodyError())
            return
          }
          settled = true
          stop()
          resolve(result)
        },
        (error) => fail(error),
      )
    })
    req.on('error', (error) => fail(new InvalidMultipartError('request stream failed', error)))
    req.on('data', onData)
    req.pipe(parser)
  })
}
