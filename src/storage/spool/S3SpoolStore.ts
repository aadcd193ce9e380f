import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3'
import type { Readable } from 'node:stream'
import { checkSpoolId, SpoolBytesMissingError, type SpoolStore } from './SpoolStore.js'

export type S3SpoolConfig = {
  bucket: string
  /** Object keys are `<prefix><upload_id>`. */
  prefix: string
  region: string
  /** An S3-compatible server (MinIO, Ceph, R2, …); undefined → AWS. */
  endpoint: string | undefined
  forcePathStyle: boolean
  /** Both or neither; neither → the SDK's default chain (AWS_* variables, profile, instance role). Never logged. */
  accessKeyId: string | undefined
  secretAccessKey: string | undefined
}

/**
 * Paid bytes in an S3-compatible object store (`SERVICE_STORAGE__SPOOL_STORE=s3`): one object per upload,
 * streamed up with its known length (one PUT, no buffering) and down as the reader asks. Checksums are sent
 * and checked only where the API requires them: the SDK's default since 3.729 streams uploads as
 * `aws-chunked` with a CRC trailer, which several S3-compatible servers refuse.
 */
export class S3SpoolStore implements SpoolStore {
  readonly kind = 's3' as const
  readonly #client: S3Client
  readonly #bucket: string
  readonly #prefix: string

  constructor(config: S3SpoolConfig) {
    this.#bucket = config.bucket
    this.#prefix = config.prefix
    this.#client = new S3Client({
      region: config.region,
      ...(config.endpoint ? { endpoint: config.endpoint } : {}),
      forcePathStyle: config.forcePathStyle,
      ...(config.accessKeyId && config.secretAccessKey ? { credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } } : {}),
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    })
  }

  #key(id: string): string {
    return `${this.#prefix}${checkSpoolId(id)}`
  }

  async put(id: string, source: Readable, sizeBytes: number): Promise<void> {
    const key = this.#key(id)
    // The SDK does not notice a body stream that fails (a client gone mid-upload): the request would wait for
    // bytes that never come. The source's error aborts it.
    const abort = new AbortController()
    const onError = (error: unknown) => abort.abort(error)
    source.once('error', onError)
    try {
      await this.#client.send(new PutObjectCommand({ Bucket: this.#bucket, Key: key, Body: source, ContentLength: sizeBytes }), { abortSignal: abort.signal })
    } catch (error) {
      source.destroy()
      // S3 keeps nothing of a failed PUT, but an earlier object under the id would remain: the contract is "nothing"
      await this.delete(id).catch(() => undefined)
      throw error
    } finally {
      source.off('error', onError)
    }
  }

  async openRead(id: string): Promise<Readable> {
    try {
      const reply = await this.#client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: this.#key(id) }))
      if (!reply.Body) throw new SpoolBytesMissingError(this.kind, id)
      // in Node the body is the response stream itself (an IncomingMessage)
      return reply.Body as Readable
    } catch (error) {
      if (isNotFound(error)) throw new SpoolBytesMissingError(this.kind, id)
      throw error
    }
  }

  async delete(id: string): Promise<void> {
    await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#key(id) }))
  }

  async size(id: string): Promise<number | undefined> {
    try {
      const head = await this.#client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key: this.#key(id) }))
      return head.ContentLength ?? 0
    } catch (error) {
      if (isNotFound(error)) return undefined
      throw error
    }
  }

  destroy(): void {
    this.#client.destroy()
  }
}

function isNotFound(error: unknown): boolean {
  if (!(error instanceof S3ServiceException)) return false
  return error.name === 'NoSuchKey' || error.name === 'NotFound' || error.$metadata.httpStatusCode === 404
}
