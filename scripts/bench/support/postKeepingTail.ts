import http from 'node:http'

/**
 * POSTs JSON with node:http and resolves with the reply's tail (the last `keep` bytes or more), the rest dropped
 * as it arrives: a lean benchmark client. On a 2-core machine the client shares the cores with the server it
 * measures, and fetch (undici web streams) spends ~2x more CPU per streamed reply (src/modelserver/README.md).
 */
export function postKeepingTail(url: string, body: unknown, agent: http.Agent, keep = 8192): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      let tail: Buffer = Buffer.alloc(0)
      res.on('data', (d: Buffer) => (tail = tail.length > keep ? d : Buffer.concat([tail, d])))
      res.on('end', () => (res.statusCode === 200 ? resolve(tail.toString('utf8')) : reject(new Error(`HTTP ${res.statusCode}: ${tail.toString('utf8')}`))))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(JSON.stringify(body))
  })
}
