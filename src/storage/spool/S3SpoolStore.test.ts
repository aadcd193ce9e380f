/**
 * What the S3 client itself decides (the SpoolStore contract runs in tests/storage/spoolStores.integration.test.ts
 * against s3rver, which checks the access key but not Signature Version 4 itself): the signature covers the request
 * exactly as it arrives (host with port, encoded path, method, unsigned payload), S3's own error reaches the caller
 * with its status and code, and without configured keys the `AWS_*` variables sign.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Readable } from 'node:stream'
import aws4 from 'aws4'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startS3rver, type RunningS3 } from '../../../tests/support/startS3rver.js'
import { S3RequestError, S3SpoolStore } from './S3SpoolStore.js'

let s3: RunningS3
beforeAll(async () => {
  s3 = await startS3rver()
})
afterAll(async () => s3?.close())

/** The Authorization header S3 would compute from the request as received, with the secret it knows. */
function expectedAuthorization(req: IncomingMessage, secretAccessKey: string): string {
  const headers: Record<string, string> = {}
  for (const name of ['host', 'x-amz-date', 'x-amz-content-sha256', 'content-length']) {
    const value = req.headers[name]
    if (typeof value === 'string') headers[name] = value
  }
  const accessKeyId = /Credential=([^/]+)\//.exec(req.headers.authorization ?? '')?.[1] ?? ''
  const signed = { method: req.method, host: req.headers.host, path: req.url, headers, service: 's3', region: 'eu-central-1' }
  aws4.sign(signed, { accessKeyId, secretAccessKey })
  return (signed.headers as Record<string, string>).Authorization ?? ''
}

describe('S3SpoolStore', () => {
  let server: Server
  const seen: { method: string; url: string; valid: boolean }[] = []
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ method: req.method!, url: req.url!, valid: req.headers.authorization === expectedAuthorization(req, 'the-secret') })
      req.resume()
      req.on('end', () => {
        res.statusCode = req.method === 'DELETE' ? 204 : 200
        if (req.method === 'HEAD') res.setHeader('content-length', '3')
        res.end()
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it('signs each call over what the server receives: host and port, bucket and encoded key, method, unsigned payload', async () => {
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/base`
    const store = new S3SpoolStore({ bucket: 'spool', prefix: 'a b/', region: 'eu-central-1', endpoint, forcePathStyle: true, accessKeyId: 'AKID', secretAccessKey: 'the-secret' })
    await store.put('upl_1', Readable.from([Buffer.from('abc')]), 3)
    expect(await store.size('upl_1')).toBe(3)
    await store.delete('upl_1')
    expect(seen).toEqual(['PUT', 'HEAD', 'DELETE'].map((method) => ({ method, url: '/base/spool/a%20b/upl_1', valid: true })))
    // and a wrong secret is not what the server computes
    const forged = new S3SpoolStore({ bucket: 'spool', prefix: '', region: 'eu-central-1', endpoint, forcePathStyle: true, accessKeyId: 'AKID', secretAccessKey: 'a-guess' })
    await forged.size('upl_1')
    expect(seen.at(-1)).toMatchObject({ valid: false })
  })

  it("passes S3's refusal on with its status and code, for writes and reads alike", async () => {
    const store = new S3SpoolStore({ ...s3.config, accessKeyId: 'NOT-A-KEY' })
    const put = store.put('upl_wrong', Readable.from([Buffer.from('abc')]), 3)
    await expect(put).rejects.toBeInstanceOf(S3RequestError)
    await expect(put).rejects.toMatchObject({ status: 403, code: 'InvalidAccessKeyId' })
    await expect(store.size('upl_wrong')).rejects.toMatchObject({ status: 403 })
  })

  it('signs with AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY when no keys are configured, read at each call', async () => {
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY }
    const store = new S3SpoolStore({ ...s3.config, accessKeyId: undefined, secretAccessKey: undefined })
    try {
      process.env.AWS_ACCESS_KEY_ID = 'S3RVER'
      process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER'
      await store.put('upl_env', Readable.from([Buffer.from('hello')]), 5)
      expect(await store.size('upl_env')).toBe(5)
      process.env.AWS_ACCESS_KEY_ID = 'ROTATED-AWAY'
      // (a HEAD reply has no body, so no code)
      await expect(store.size('upl_env')).rejects.toMatchObject({ status: 403 })
      await expect(store.openRead('upl_env')).rejects.toMatchObject({ status: 403, code: 'InvalidAccessKeyId' })
    } finally {
      for (const [name, value] of [['AWS_ACCESS_KEY_ID', saved.id], ['AWS_SECRET_ACCESS_KEY', saved.secret]] as const) {
        if (value === undefined) delete process.env[name]
        else process.env[name] = value
      }
    }
  })
})
