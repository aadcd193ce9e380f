/**
 * asyncapi/events.yaml: valid (parser), consistent with the gateway document (the catalogue envelope is
 * the `CatalogueEvent` schema of `GET /insight/catalogue/recent`), covering every catalogue kind of seed
 * 000 §6.1 and every contract event of §6.2 with its indexed arguments.
 */
import { describe, expect, it } from 'vitest'
import { validateAsyncApi } from '../../scripts/lint-spec.js'
import { isObject, type JsonObject, loadDoc, loadYaml } from './specHelpers.js'

const events = loadYaml('asyncapi/events.yaml')
const components = events.components as JsonObject
const messages = components.messages as Record<string, JsonObject>
const schemas = components.schemas as Record<string, JsonObject>

/** Seed 000 §6.2, argument order and indexed flags as the seed lists them. */
const seedContractEvents: Record<string, { channel: string; args: [string, boolean][] }> = {
  StorageVerified: { channel: 'storageAttest', args: [['storer', true], ['txid', true], ['sha256Expected', false], ['nonce', false]] },
  RootCommitted: { channel: 'receiptBatches', args: [['epoch', true], ['root', false], ['leafCount', false], ['arweaveTx', false]] },
  Stored: { channel: 'receiptBatches', args: [['payer', true], ['arTxid', true], ['sizeBytes', false], ['paidAtomics', false], ['currency', false], ['epoch', false]] },
  Harvested: { channel: 'treasury', args: [['warIn', false], ['usdcOut', false], ['sentToSink', false]] },
  ConfigUpdated: { channel: 'treasury', args: [['priceX96', false], ['bps', false], ['twap', false], ['sink', false]] },
}

const catalogueKinds = [
  'auth.gate.redirect',
  'admin.shadow_overlord_action',
  'admin.cabinet.provisioned',
  'admin.cabinet.cleared',
  'admin.shadow_overlord_release_key',
]

describe('asyncapi/events.yaml', () => {
  it('is a valid AsyncAPI 3.0 document (no error diagnostics)', async () => {
    expect(events.asyncapi).toBe('3.0.0')
    const issues = await validateAsyncApi()
    expect(issues.filter((i) => i.severity === 'error')).toEqual([])
  })

  it('has a message for every catalogue kind of seed §6.1 on both catalogue channels', () => {
    const names = Object.values(messages).map((m) => m.name)
    for (const kind of catalogueKinds) expect(names, kind).toContain(kind)
    const channels = events.channels as Record<string, JsonObject>
    for (const channel of ['catalogueLog', 'catalogueRecent']) {
      const refs = Object.values(channels[channel]!.messages as Record<string, JsonObject>).map((m) => String(m.$ref).split('/').pop())
      const kinds = refs.map((r) => messages[r!]!.name)
      expect(kinds, channel).toEqual(expect.arrayContaining(catalogueKinds))
    }
  })

  it('the catalogue envelope equals the gateway CatalogueEvent schema (fields and required set)', () => {
    const gateway = loadDoc('gateway')
    const event = ((gateway.components as JsonObject).schemas as Record<string, JsonObject>).CatalogueEvent!
    const envelope = schemas.CatalogueEnvelope!
    expect(Object.keys(envelope.properties as JsonObject).sort()).toEqual(Object.keys(event.properties as JsonObject).sort())
    expect([...(envelope.required as string[])].sort()).toEqual([...(event.required as string[])].sort())
    const kindDoc = String((((gateway.components as JsonObject).schemas as Record<string, JsonObject>).CatalogueKind!).description)
    for (const m of Object.values(messages)) {
      if (/^[a-z]/.test(String(m.name))) expect(kindDoc, `CatalogueKind lists ${String(m.name)}`).toContain(`\`${String(m.name)}\``)
    }
  })

  it('each catalogue message fixes its kind and the release-key event is critical', () => {
    for (const m of Object.values(messages).filter((x) => /^[a-z]/.test(String(x.name)))) {
      const parts = ((m.payload as JsonObject).allOf as JsonObject[])
      const own = parts.find((p) => isObject(p.properties) && 'kind' in p.properties)!
      expect(((own.properties as JsonObject).kind as JsonObject).const, String(m.name)).toBe(m.name)
    }
    const release = messages.ShadowOverlordReleaseKey!
    const own = ((release.payload as JsonObject).allOf as JsonObject[])[1]!
    expect(((own.properties as JsonObject).severity as JsonObject).const).toBe('critical')
    const payload = schemas.ShadowOverlordReleaseKeyPayload!
    expect(payload.additionalProperties).toBe(false)
    expect(Object.keys(payload.properties as JsonObject)).not.toContain('private_key')
  })

  it('has every contract event of seed §6.2 on its contract channel, indexed arguments marked', () => {
    const channels = events.channels as Record<string, JsonObject>
    for (const [name, spec] of Object.entries(seedContractEvents)) {
      const m = messages[name]
      expect(m, name).toBeDefined()
      const props = Object.entries((m!.payload as JsonObject).properties as Record<string, JsonObject>)
      expect(props.map(([k, v]) => [k, v['x-indexed'] === true]), name).toEqual(spec.args)
      for (const [k, v] of props) expect(typeof v['x-solidity-type'], `${name}.${k} type`).toBe('string')
      const refs = Object.values(channels[spec.channel]!.messages as Record<string, JsonObject>).map((x) => String(x.$ref))
      expect(refs, `${name} on ${spec.channel}`).toContain(`#/components/messages/${name}`)
    }
  })
})
