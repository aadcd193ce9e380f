/**
 * The soak, short (issue 19): 2 PostgreSQL-backed gateways behind HAProxy for 60 s of modest mixed traffic
 * (two upload clients, uploads up to 4 MB on every rail, replays, logins, cost calls against one model server, challenge floods), one instance
 * killed (-9) and restarted every ~15 s (two kills fit in the minute); every reconciliation check must hold (scripts/soak/runSoak.ts).
 * The full run is `npm run soak -- --instances 2 --seconds 120` (docs/reliability.md).
 */
import { describe, expect, it } from 'vitest'
import { reportTable, runSoak } from '../../scripts/soak/runSoak.js'

describe('soak: 2 instances behind HAProxy, kills every ~15 s, 60 s', () => {
  it('loses no paid upload, settles nothing twice, accepts no nonce twice, keeps every session, and stays under 0.5% /store errors outside kills', async () => {
    const lines: string[] = []
    const report = await runSoak({ instances: 2, seconds: 60, maxUploadBytes: 4 * 1024 * 1024, uploaders: 2, killEveryS: 15, log: (l) => lines.push(l) })
    const table = reportTable(report.checks)
    expect(report.kills, table).toBeGreaterThanOrEqual(2)
    expect(report.checks.filter((c) => !c.ok), `${table}\n${lines.join('\n')}`).toEqual([])
    expect(report.outcomes.logins.length).toBeGreaterThan(0)
    expect(report.outcomes.replays.length).toBeGreaterThan(0)
    expect(report.outcomes.costCalls.filter((c) => c.status === 200).length).toBeGreaterThan(0)
  }, 420_000)
})
