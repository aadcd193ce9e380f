import { describe, expect, it } from 'vitest'
import { buildProgram } from './main.js'
import { protectStorageIds } from './protectStorageIds.js'

const dashId = '-jrxd9091Av5iC38cBqjWXQOBwtPvX-tmC2FytWresY'

describe('protectStorageIds: a storage id that begins with "-" is an operand of receipt and verify', () => {
  it('moves it behind "--", keeping the options before it', () => {
    expect(protectStorageIds(['receipt', dashId, '--gateway', 'http://gw'])).toEqual(['receipt', '--gateway', 'http://gw', '--', dashId])
    expect(protectStorageIds(['verify', '--json', dashId])).toEqual(['verify', '--json', '--', dashId])
    expect(protectStorageIds(['receipt', '--', dashId])).toEqual(['receipt', '--', dashId])
  })

  it('leaves other commands, ordinary ids and options alone', () => {
    expect(protectStorageIds(['store', dashId])).toEqual(['store', dashId])
    expect(protectStorageIds(['receipt', 'jrxd9091Av5iC38cBqjWXQOBwtPvX-tmC2FytWresYx'])).toEqual(['receipt', 'jrxd9091Av5iC38cBqjWXQOBwtPvX-tmC2FytWresYx'])
    expect(protectStorageIds(['receipt', '--frobnicate'])).toEqual(['receipt', '--frobnicate'])
  })

  it('commander then reads the id as the argument (without the move it is an unknown option)', async () => {
    const seen: string[] = []
    const parse = async (argv: string[]) => {
      const program = buildProgram().exitOverride()
      for (const c of program.commands) c.exitOverride().configureOutput({ writeErr: () => undefined }).action((id: string) => void seen.push(id))
      await program.parseAsync(argv, { from: 'user' })
    }
    await expect(parse(['receipt', dashId])).rejects.toThrow(/unknown option/)
    await parse(protectStorageIds(['receipt', dashId, '--gateway', 'http://gw']))
    expect(seen).toEqual([dashId])
  })
})
