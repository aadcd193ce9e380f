import { describe, expect, it } from 'vitest'
import { loadModelServerConfig } from '../config.js'
import { createOriginMatcher, ollamaAllowedOrigins } from './corsOrigins.js'

describe("allowed origins (Ollama's OLLAMA_ORIGINS and defaults)", () => {
  const defaults = createOriginMatcher(ollamaAllowedOrigins(undefined))

  it('allows local pages on any port and the desktop/editor schemes by default', () => {
    for (const origin of [
      'http://localhost',
      'http://localhost:5173',
      'https://127.0.0.1:8443',
      'http://0.0.0.0:3000',
      'app://obsidian.md',
      'file://',
      'tauri://localhost',
      'vscode-webview://1a2b3c',
      'vscode-file://vscode-app',
    ]) {
      expect(defaults.matches(origin), origin).toBe(true)
    }
  })

  it('refuses other sites and browser extensions by default', () => {
    for (const origin of ['https://example.com', 'http://localhost.example.com', 'http://127.0.0.2:8000', 'chrome-extension://abcdef', 'null']) {
      expect(defaults.matches(origin), origin).toBe(false)
    }
    expect(defaults.allowAll).toBe(false)
  })

  it('adds OLLAMA_ORIGINS entries: exact origins and one-* wildcards; * alone allows any', () => {
    const m = createOriginMatcher(ollamaAllowedOrigins('https://app.example.com, chrome-extension://*,https://*.corp.example'))
    expect(m.matches('https://app.example.com')).toBe(true)
    expect(m.matches('https://APP.example.com')).toBe(true)
    expect(m.matches('https://other.example.com')).toBe(false)
    expect(m.matches('chrome-extension://abcdef')).toBe(true)
    expect(m.matches('https://wiki.corp.example')).toBe(true)
    expect(m.matches('https://corp.example.evil')).toBe(false)
    expect(m.matches('http://localhost:3000')).toBe(true)
    const any = createOriginMatcher(ollamaAllowedOrigins('*'))
    expect(any.allowAll).toBe(true)
    expect(any.matches('https://anything.example')).toBe(true)
  })

  it('reports entries that can never match instead of failing to start', () => {
    const m = createOriginMatcher(ollamaAllowedOrigins('example.com,https://*.a.*,https://ok.example'))
    expect(m.ignored).toEqual(['example.com', 'https://*.a.*'])
    expect(m.matches('https://ok.example')).toBe(true)
  })

  it('MODELSERVER_ORIGINS wins over OLLAMA_ORIGINS', () => {
    expect(loadModelServerConfig({ OLLAMA_ORIGINS: 'https://a.example' }).origins[0]).toBe('https://a.example')
    expect(loadModelServerConfig({ OLLAMA_ORIGINS: 'https://a.example', MODELSERVER_ORIGINS: 'https://b.example' }).origins[0]).toBe('https://b.example')
  })
})
