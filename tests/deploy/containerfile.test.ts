/**
 * The operators' image files, checked without a container engine (none here): the Containerfile
 * through dockerfile-utils' linter (every rule an error) and by what it must do; compose.yaml and
 * deploy/haproxy.cfg by their structure. What the image runs is tested in productionInstall.test.ts.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { validate, ValidationSeverity, type ValidatorSettings } from 'dockerfile-utils'
import { parse } from 'yaml'
import { describe, expect, it } from 'vitest'
import { HAPROXY } from '../../scripts/soak/haproxy.js'
import { containerfileStages } from './containerfileStages.js'

const root = resolve(import.meta.dirname, '../..')
const containerfile = readFileSync(join(root, 'Containerfile'), 'utf8')
const ALL_ERRORS: ValidatorSettings = {
  deprecatedMaintainer: ValidationSeverity.ERROR,
  directiveCasing: ValidationSeverity.ERROR,
  emptyContinuationLine: ValidationSeverity.ERROR,
  instructionCasing: ValidationSeverity.ERROR,
  instructionCmdMultiple: ValidationSeverity.ERROR,
  instructionEntrypointMultiple: ValidationSeverity.ERROR,
  instructionHealthcheckMultiple: ValidationSeverity.ERROR,
  instructionJSONInSingleQuotes: ValidationSeverity.ERROR,
  instructionWorkdirRelative: ValidationSeverity.ERROR,
}
const lint = (text: string) => validate(text, ALL_ERRORS).map((d) => `${d.range.start.line + 1}: ${d.message}`)

describe('Containerfile', () => {
  it('passes dockerfile-utils with every rule an error', () => {
    expect(lint(containerfile)).toEqual([])
  })

  it('the linter does find mistakes (so the check above can fail)', () => {
    const bad = lint('FROM node:24-slim\nworkdir app\nCMD ["a"]\nCMD ["b"]\nHEALTHCHECK CMD a\nHEALTHCHECK CMD b\nEXPOSE abc\n')
    expect(bad.length).toBeGreaterThanOrEqual(5)
    expect(lint(containerfile.replace('USER node', 'USER'))).not.toEqual([])
  })

  it('is multi-stage on a slim base of a supported Node line, makes the production install, runs as node with one /data volume', () => {
    const stages = containerfileStages(containerfile)
    expect(stages.length).toBeGreaterThanOrEqual(3)
    const line = /^ARG NODE_IMAGE=\S*node:(\d+)\.\d+\.\d+-[\w-]*slim$/m.exec(containerfile)?.[1]
    expect(line, 'ARG NODE_IMAGE=…node:<major.minor.patch>-…slim').toBeDefined()
    const engines = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node
    expect(engines.split('||').map((range) => range.trim().replace(/^\^/, ''))).toContain(line)
    expect(stages.every((s) => s.from === '${NODE_IMAGE}' || stages.some((t) => t.name === s.from))).toBe(true)
    const runs = stages.flatMap((s) => s.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args))
    expect(runs.some((r) => r.includes('npm ci --omit=dev'))).toBe(true)
    expect(runs.some((r) => r.includes('npm run build'))).toBe(true)
    const final = stages.at(-1)!
    expect(final.name).toBeUndefined()
    const of = (k: string) => final.instructions.filter((i) => i.keyword === k).map((i) => i.args)
    expect(of('USER')).toEqual(['node'])
    expect(of('VOLUME')).toEqual(['["/data"]'])
    expect(of('ENV').join(' ')).toContain('SERVICE_DATA_DIR=/data')
    expect(of('HEALTHCHECK')).toHaveLength(1)
    expect(of('HEALTHCHECK')[0]).toContain('deploy/healthcheck.mjs')
    // the final stage runs nothing that needs a compiler, and takes node_modules from the production install
    expect(of('COPY').filter((a) => a.startsWith('--from=')).map((a) => a.split(/\s+/)[0])).toEqual(['--from=deps', '--from=build'])
    const deps = stages.find((s) => s.name === 'deps')!
    expect(deps.instructions.some((i) => i.keyword === 'RUN' && i.args.includes('--omit=dev'))).toBe(true)
    // the installs read the committed .npmrc (engine-strict, legacy-peer-deps), and nothing compiles or prunes
    const copied = stages.flatMap((s) => s.instructions).filter((i) => i.keyword === 'COPY' && !i.args.startsWith('--from')).flatMap((i) => i.args.split(/\s+/).slice(0, -1))
    expect(copied).toContain('.npmrc')
    expect(containerfile).not.toMatch(/apt-get|g\+\+|node-gyp|\brm -rf .*node_modules/)
    // everything it copies from the build context exists
    for (const i of stages.flatMap((s) => s.instructions).filter((i) => i.keyword === 'COPY' && !i.args.startsWith('--from'))) {
      for (const source of i.args.split(/\s+/).slice(0, -1)) expect(existsSync(join(root, source)), source).toBe(true)
    }
  })
})

describe('compose.yaml', () => {
  const compose = parse(readFileSync(join(root, 'compose.yaml'), 'utf8'), { merge: true }) as {
    services: Record<string, { read_only?: boolean; user?: string; volumes?: string[]; command?: string[]; image: string; healthcheck?: { test: string[] }; environment?: Record<string, string>; stop_grace_period?: string }>
    volumes: Record<string, unknown>
  }
  const services = new Map(Object.entries(compose.services))

  it('runs HAProxy, gateway replicas, PostgreSQL, Redis and the model server', () => {
    expect([...services.keys()].sort()).toEqual(['gateway-1', 'gateway-2', 'haproxy', 'modelserver', 'postgres', 'redis'])
  })

  it('runs the image read-only as node, each container with one data volume of its own and a health check', () => {
    const ours = ['gateway-1', 'gateway-2', 'modelserver']
    const volumes = ours.map((name) => services.get(name)!.volumes)
    for (const name of ours) {
      const s = services.get(name)!
      expect(s.image).toBe('pay2store:latest')
      expect(s.read_only, name).toBe(true)
      expect(s.user, name).toBe('node')
      expect(s.volumes, name).toHaveLength(1)
      expect(s.volumes![0]).toMatch(/^[\w-]+:\/data$/)
      expect(s.healthcheck?.test).toEqual(['CMD', 'node', 'deploy/healthcheck.mjs'])
    }
    expect(new Set(volumes.flat()).size).toBe(ours.length)
    expect(services.get('modelserver')!.command).toEqual(['node', 'dist/src/modelserver/main.js'])
    // the model server listens beyond loopback only with API keys, and the gateways send the key
    expect(services.get('modelserver')!.environment!.MODELSERVER_API_KEYS).toMatch(/^\$\{MODELSERVER_API_KEY:\?/)
    expect(services.get('gateway-1')!.environment!.SERVICE_LLM__MODELSERVER__API_KEY).toMatch(/^\$\{MODELSERVER_API_KEY:\?/)
    expect(services.get('gateway-2')!.environment!.SERVICE_DATABASE_URL).toMatch(/^postgres:\/\/.*@postgres:5432\//)
  })

  it('HAProxy balances over both replicas and checks their readiness often enough for their drain delay', () => {
    const cfg = readFileSync(join(root, 'deploy/haproxy.cfg'), 'utf8')
    expect(cfg).toMatch(/^\s*option httpchk GET \/health\/ready$/m)
    expect(cfg).toMatch(/^\s*http-check expect status 200$/m)
    const servers = [...cfg.matchAll(/^\s*server (gateway-\d) \1:8000 check inter (\d+) fall (\d+)/gm)]
    expect(servers).toHaveLength(2)
    // a stopping replica serves its drain delay: HAProxy must have seen it not ready by then (checks × fall, with room)
    for (const env of [services.get('gateway-1')!.environment!, services.get('gateway-2')!.environment!]) {
      const delay = Number(env.SERVICE_SHUTDOWN__DRAIN_DELAY_MS)
      for (const [, , inter, fall] of servers) expect(delay).toBeGreaterThanOrEqual(2 * Number(inter) * Number(fall))
      expect(Number(env.SERVICE_SHUTDOWN__QUIET_MS)).toBeGreaterThanOrEqual(Number(servers[0]![2]))
    }
  })

  it('gives a stopping replica the time its drain takes before the engine kills it', () => {
    const grace = services.get('gateway-1')!.stop_grace_period
    const seconds = Number(/^(\d+)s$/.exec(grace ?? '')?.[1])
    const env = services.get('gateway-1')!.environment!
    const deadlineMs = Number(env.SERVICE_SHUTDOWN__DEADLINE_MS ?? 25_000) // the default
    // the process leaves by itself at most 10 s after the deadline (src/main.ts)
    expect(seconds * 1000).toBeGreaterThanOrEqual(deadlineMs + 10_000)
  })

  it.skipIf(!existsSync(HAPROXY))('HAProxy accepts deploy/haproxy.cfg (haproxy -c; CI installs HAProxy)', () => {
    const check = spawnSync(HAPROXY, ['-c', '-f', join(root, 'deploy/haproxy.cfg')], { encoding: 'utf8' })
    expect(check.status, check.stderr + check.stdout).toBe(0)
  })
})
