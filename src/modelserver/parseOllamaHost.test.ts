import { describe, expect, it } from 'vitest'
import { loadModelServerConfig } from './config.js'
import { parseOllamaHost } from './parseOllamaHost.js'

describe('OLLAMA_HOST, read as Ollama reads it', () => {
  it.each([
    [undefined, '127.0.0.1', 11434],
    ['', '127.0.0.1', 11434],
    ['0.0.0.0', '0.0.0.0', 11434],
    ['0.0.0.0:11435', '0.0.0.0', 11435],
    [':11435', '', 11435],
    ['"127.0.0.1:5000"', '127.0.0.1', 5000],
    ['  localhost:8080  ', 'localhost', 8080],
    ['http://0.0.0.0', '0.0.0.0', 80],
    ['https://models.example', 'models.example', 443],
    ['http://10.0.0.2:9000/ignored/path', '10.0.0.2', 9000],
    ['[::1]:8080', '::1', 8080],
    ['::1', '::1', 11434],
    ['[::]', '::', 11434],
    ['localhost:notaport', 'localhost', 11434],
    ['127.0.0.1:99999', '127.0.0.1', 11434],
  ])('%j → %s:%i', (value, host, port) => {
    expect(parseOllamaHost(value)).toEqual({ host, port })
  })

  it('is the listen address unless MODELSERVER_HOST / MODELSERVER_PORT say otherwise', () => {
    expect(loadModelServerConfig({ OLLAMA_HOST: '0.0.0.0:11500' })).toMatchObject({ host: '0.0.0.0', port: 11500 })
    expect(loadModelServerConfig({ OLLAMA_HOST: '0.0.0.0:11500', MODELSERVER_PORT: '0' })).toMatchObject({ host: '0.0.0.0', port: 0 })
    expect(loadModelServerConfig({ OLLAMA_HOST: '0.0.0.0:11500', MODELSERVER_HOST: '127.0.0.1' })).toMatchObject({ host: '127.0.0.1', port: 11500 })
    expect(loadModelServerConfig({})).toMatchObject({ host: '127.0.0.1', port: 11434 })
  })
})
