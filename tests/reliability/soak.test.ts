/**
 * The soak, short (docs/reliability.md): 3 gateways on PostgreSQL and Redis behind HAProxy (readiness checks) for
 * 60 s of modest mixed traffic (two upload clients, uploads up to 4 MB on every rail, replays, logins, cost
 * calls against one model server, challenge floods, the overlord's provision / sign / clear through different
 * replicas), one replica restarted every ~15 s, by turns a crash (`kill -9`) and a rolling restart (SIGTERM);
 * every reconciliation check must hold (scripts/soak/runSoak.ts), except the known findings it names
 * (`NO*`, `KNOWN_FINDINGS`). The full run is `npm run soak -- --instances 3 --seconds 120` (docs/reliability.md).
 */
import { describe, expect, it } from 'vitest'
import { reportTable, runSoak } from '../../scripts/soak/runSoak.js'

describe('soak: 3 replicas behind HAProxy, a restart every ~15 s (SIGTERM, kill -9 by turns), 60 s', () => {
  it('loses no paid upload, settles nothing twice, accepts no nonce twice, keeps every session, no error in a rolling restart, under 0.5% /store errors outside kills', async () => {
    const lines: string[] = []
    const report = await runSoak({ instances: 3, seconds: 60, maxUploadBytes: 4 * 1024 * 1024, uploaders: 2, killEveryS: 15, log: (l) => lines.push(l) })
    const table = reportTable(report.checks)
    expect(report.kills, table).toBeGreaterThanOrEqual(2) // at least one rolling restart and one kill -9
    expect(report.checks.filter((c) => !c.ok && c.known === undefined), `${table}\n${lines.join('\n')}`).toEqual([])
    expect(report.outcomes.logins.length).toBeGreaterThan(0)
    expect(report.outcomes.replays.length).toBeGreaterThan(0)
    expect(report.outcomes.costCalls.filter((c) => c.status === 200).length).toBeGreaterThan(0)
    process.stdout.write(`${table}\n`)
  }, 900_000)
})
