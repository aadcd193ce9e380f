import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import aws4, { type Request as SignedRequest } from 'aws4'
import { checkSpoolId, SpoolBytesMissingError, type SpoolStore } from './SpoolStore.js'

export type S3SpoolConfig = {
  bucket: string
  /** Object keys are `<prefix><upload_id>`. */
  prefix: string
  region: string
  /** An S3-compatible server (MinIO, Ceph, R2, …); undefined → AWS. */
  endpoint: string | undefined
  forcePathStyle: boolean
  /**
   * Both or neither; neither → `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN` from the
   * environment (read per request, so rotated session credentials are picked up). Never logged.
   */
  accessKeyId: string | undefined
  secretAccessKey: string | undefined
}

/** An S3 reply other than the one the call expects: the status and the start of S3's XML error. */
export class S3RequestError extends Error {
  constructor(
    readonly method: string,
    readonly status: number,
    readonly code: string | undefined,
    detail: string,
  ) {
    super(`S3 ${method} answered ${status}${code ? ` ${code}` : ''}: ${detail}`)
    this.name = 'S3RequestError'
  }
}

/**
 * Paid bytes in an S3-compatible object store (`SERVICE_STORAGE__SPOOL_STORE=s3`): one object per upload,
 * streamed up with its known length (one PUT, `UNSIGNED-PAYLOAD`, no buffering: the body's hash would need a
 * second pass over the bytes) and down as the reader asks. Four object calls (PUT, GET, HEAD, DELETE) over
 * Node's HTTP client, signed with AWS Signature Version 4 by `aws4`; the whole AWS SDK (14 MB, most of the
 * production install's growth) is not needed for them. Plain `Content-Length` uploads: several S3-compatible
 * servers refuse the SDK's default `aws-chunked` encoding with a CRC trailer.
 */
export class S3SpoolStore implements SpoolStore {
  readonly kind = 's3' as const
  readonly #config: S3SpoolConfig
  readonly #endpoint: URL

  constructor(config: S3SpoolConfig) {
    this.#config = config
    this.#endpoint = new URL(config.endpoint ?? `https://s3.${config.region}.amazonaws.com`)
  }

  #key(id: string): string {
    return `${this.#config.prefix}${checkSpoolId(id)}`
  }

  /** Signs and sends one object call; resolves with the response once its headers arrive. */
  async #send(method: 'PUT' | 'GET' | 'HEAD' | 'DELETE', id: string, body?: { source: Readable; sizeBytes: number }): Promise<IncomingMessage> {
    const { bucket, region, forcePathStyle, accessKeyId, secretAccessKey } = this.#config
    const objectPath = this.#key(id).split('/').map(encodeURIComponent).join('/')
    const base = this.#endpoint.pathname.replace(/\/$/, '')
    // path style: <endpoint>/<bucket>/<key>; virtual-hosted (AWS's default): <bucket>.<endpoint host>/<key>
    const hostname = forcePathStyle ? this.#endpoint.hostname : `${bucket}.${this.#endpoint.hostname}`
    const path = forcePathStyle ? `${base}/${encodeURIComponent(bucket)}/${objectPath}` : `${base}/${objectPath}`
    const headers: Record<string, string> = body ? { 'Content-Length': String(body.sizeBytes), 'X-Amz-Content-Sha256': 'UNSIGNED-PAYLOAD' } : {}
    const options: SignedRequest = {
      method,
      protocol: this.#endpoint.protocol,
      hostname,
      ...(this.#endpoint.port ? { port: Number(this.#endpoint.port) } : {}),
      path,
      headers,
      service: 's3',
      region,
    }
    aws4.sign(options, accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined)
    const send = this.#endpoint.protocol === 'https:' ? httpsRequest : httpRequest
    return await new Promise<IncomingMessage>((resolve, reject) => {
      const req = send(options, resolve)
      req.on('error', reject)
      if (!body) {
        req.end()
        return
      }
      // A body stream that fails (a client gone mid-upload) aborts the request instead of leaving it waiting
      // for bytes that never come.
      pipeline(body.source, req).catch((error: unknown) => {
        req.destroy(error as Error)
        reject(error as Error)
      })
    })
  }

  async put(id: string, source: Readable, sizeBytes: number): Promise<void> {
    try {
      const reply = await this.#send('PUT', id, { source, sizeBytes })
      await expectStatus('PUT', reply, 200)
    } catch (error) {
      source.destroy()
      // S3 keeps nothing of a failed PUT, but an earlier object under the id would remain: the contract is "nothing"
      await this.delete(id).catch(() => undefined)
      throw error
    }
  }

  async openRead(id: string): Promise<Readable> {
    const reply = await this.#send('GET', id)
    if (reply.statusCode === 404) {
      reply.resume()
      throw new SpoolBytesMissingError(this.kind, id)
    }
    if (reply.statusCode !== 200) await expectStatus('GET', reply, 200)
    return reply
  }

  async delete(id: string): Promise<void> {
    // S3 answers 204 whether or not the object was there
    await expectStatus('DELETE', await this.#send('DELETE', id), 204, 200)
  }

  async size(id: string): Promise<number | undefined> {
    const reply = await this.#send('HEAD', id)
    reply.resume()
    if (reply.statusCode === 404) return undefined
    await expectStatus('HEAD', reply, 200)
    return Number(reply.headers['content-length'] ?? 0)
  }

  destroy(): void {
    // no client or pool of its own: requests use Node's global agents
  }
}

/** Drains the reply; throws an `S3RequestError` unless its status is one of `ok`. */
async function expectStatus(method: string, reply: IncomingMessage, ...ok: number[]): Promise<void> {
  const status = reply.statusCode ?? 0
  if (ok.includes(status)) {
    reply.resume()
    return
  }
  let text = ''
  for await (const chunk of reply) if (text.length < 2048) text += String(chunk)
  const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1]
  const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1]
  throw new S3RequestError(method, status, code, message ?? (text.slice(0, 200) || '(no body)'))
}
