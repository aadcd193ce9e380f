/**
 * A GET through node:http, as `sendFile` sends: the same transport for the quote as for the upload it prices (fetch
 * refuses ports browsers block — 1, 6000, 10080… — where a gateway may still listen).
 */
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { requestLost, unreachable, type Service } from './CliError.js'
import { idleTimeout, type SendFileResult } from './sendFile.js'

/** GETs `url`; a failure is named by `shownAs` (the resource the user asked for, not the query behind it); `idleMs` as `sendFile`'s. */
export function getText(url: string, shownAs: string, service?: Service, idleMs?: number): Promise<SendFileResult> {
  const target = new URL(url)
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise((resolve, reject) => {
    let answered = false
    const req = send(target, { method: 'GET', headers: { accept: 'application/json' } }, (res) => {
      answered = true
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', (error) => reject(requestLost(shownAs, { cause: error }, service)))
    })
    idleTimeout(req, idleMs)
    req.on('error', (error) => {
      if (!answered) reject(unreachable(shownAs, { cause: error }, service))
    })
    req.end()
  })
}
