import { createHash, randomUUID } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import busboy from 'busboy'
import { EmptyBodyError, InvalidMultipartError, PayloadTooLargeError } from './errors.js'

export type ReceivedUpload = {
  /** Temp file holding the bytes; the caller moves or deletes it. */
  path: string
  sha256: string
  sizeBytes: bigint
  mimeType: string
  filename: string | undefined
}

export type ReceiveUploadOptions = {
  tmpDir: string
  maxBytes: bigint
  /** Multipart field carrying the file (default `file`). */
  field?: string
}

type IncomingLike = Readable & { headers: Record<string, string | string[] | undefined> }

/**
 * Streams the `file` field of a multipart request to a temp file, hashing it on the way: memory stays
 * bounded by the stream buffers whatever the file size. Empty → 400 `empty body`; above `maxBytes` → 413.
 */
export async function receiveUpload(req: IncomingLike, { tmpDir, maxBytes, field = 'file' }: ReceiveUploadOptions): Promise<ReceivedUpload> {
  const declared = Number(req.headers['content-length'])
  // Multipart framing adds a few hundred bytes; anything declared far above the limit is refused unread.
  if (Number.isFinite(declared) && BigInt(Math.trunc(declared)) > maxBytes + 1_048_576n) {
    req.resume()
    throw new PayloadTooLargeError(maxBytes)
  }
  let parser: busboy.Busboy
  try {
    parser = busboy({
      headers: req.headers as busboy.BusboyConfig['headers'],
      limits: { files: 1, fileSize: maxBytes > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(maxBytes) + 1 },
    })
  } catch (cause) {
    req.resume()
    throw new InvalidMultipartError('request must be multipart/form-data with a file field `file`', cause)
  }
  await mkdir(tmpDir, { recursive: true })
  const path = join(tmpDir, `upload-${randomUUID()}`)

  return new Promise<ReceivedUpload>((resolve, reject) => {
    let settled = false
    let fileSeen = false
    let writing: Promise<ReceivedUpload> | undefined
    const fail = (error: unknown) => {
      if (settled) return
      settled = true
      req.unpipe(parser)
      req.resume() // drain, so the client can read our answer
      void rm(path, { force: true })
      reject(error)
    }

    parser.on('file', (name, stream, info) => {
      if (name !== field || fileSeen) {
        stream.resume()
        return
      }
      fileSeen = true
      const hash = createHash('sha256')
      let size = 0n
      let tooLarge = false
      const meter = new Transform({
        transform(chunk: Buffer, _enc, cb) {
          size += BigInt(chunk.length)
          if (size > maxBytes) {
            tooLarge = true
            cb(new PayloadTooLargeError(maxBytes))
            return
          }
          hash.update(chunk)
          cb(null, chunk)
        },
      })
      writing = pipeline(stream, meter, createWriteStream(path)).then(() => {
        if (tooLarge || (stream as Readable & { truncated?: boolean }).truncated) throw new PayloadTooLargeError(maxBytes)
        return {
          path,
          sha256: hash.digest('hex'),
          sizeBytes: size,
          mimeType: info.mimeType || 'application/octet-stream',
          filename: info.filename,
        }
      })
      writing.catch(fail)
    })
    parser.on('error', (error) => fail(new InvalidMultipartError('malformed multipart body', error)))
    parser.on('close', () => {
      if (settled) return
      if (!writing) {
        fail(new InvalidMultipartError('missing file field `file`'))
        return
      }
      writing.then(
        async (result) => {
          if (settled) return
          if (result.sizeBytes === 0n) {
            fail(new EmptyBodyError())
            return
          }
          settled = true
          resolve(result)
        },
        (error) => fail(error),
      )
    })
    req.on('error', (error) => fail(new InvalidMultipartError('request stream failed', error)))
    req.pipe(parser)
  })
}
