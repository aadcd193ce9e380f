import { request } from 'node:http'

/** The multipart framing of the uploads below: one `file` part. */
export const BOUNDARY = 'trickleboundary'
export const FILE_HEAD = `--${BOUNDARY}\r\ncontent-disposition: form-data; name="file"; filename="a.bin"\r\ncontent-type: application/octet-stream\r\n\r\n`
export const FILE_TAIL = `\r\n--${BOUNDARY}--\r\n`

/**
 * An upload to `POST /store` from `localAddress` (any of 127/8 on Linux: one client address each) that sends its
 * multipart head and then one byte a second, until stopped — a slow sender holding whatever the gateway gives it.
 */
export function trickle(url: string, localAddress: string, headers: Record<string, string> = {}) {
  const req = request(`${url}/store`, {
    method: 'POST',
    localAddress,
    headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': '1000000', ...headers },
  })
  let answered: number | undefined
  req.on('response', (res) => {
    answered = res.statusCode
    res.resume()
  })
  req.on('error', () => undefined)
  req.write(FILE_HEAD)
  const timer = setInterval(() => req.write('x'), 1000)
  return {
    /** The status of the answer, once there is one. */
    get answered() {
      return answered
    },
    stop() {
      clearInterval(timer)
      req.destroy()
    },
  }
}

export type StoreAnswer = { status: number; body: { error: string; message: string; details?: Record<string, unknown> } }

/** A whole multipart upload of `data` from `localAddress` (fetch cannot choose its source address); the JSON answer. */
export function postFrom(url: string, localAddress: string, data: Buffer, headers: Record<string, string> = {}): Promise<StoreAnswer> {
  const body = Buffer.concat([Buffer.from(FILE_HEAD), data, Buffer.from(FILE_TAIL)])
  return new Promise((resolve, reject) => {
    const req = request(`${url}/store`, { method: 'POST', localAddress, headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': String(body.length), ...headers } }, (res) => {
      let text = ''
      res.on('data', (d) => (text += d))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }))
    })
    req.on('error', reject)
    req.end(body)
  })
}
