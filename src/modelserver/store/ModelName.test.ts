import { describe, expect, it } from 'vitest'
import { displayName, fullName, parseModelName } from './ModelName.js'

describe('parseModelName', () => {
  it('normalises short names like Ollama', () => {
    expect(fullName(parseModelName('llama3'))).toBe('registry.ollama.ai/library/llama3:latest')
    expect(fullName(parseModelName('llama3:8b'))).toBe('registry.ollama.ai/library/llama3:8b')
    expect(fullName(parseModelName('me/tiny'))).toBe('registry.ollama.ai/me/tiny:latest')
    expect(fullName(parseModelName('127.0.0.1:11435/library/tiny:v1'))).toBe('127.0.0.1:11435/library/tiny:v1')
  })

  it('displays the default host and namespace the short way', () => {
    expect(displayName(parseModelName('registry.ollama.ai/library/tiny:latest'))).toBe('tiny:latest')
    expect(displayName(parseModelName('me/tiny'))).toBe('me/tiny:latest')
    expect(displayName(parseModelName('localhost:5000/me/tiny:x'))).toBe('localhost:5000/me/tiny:x')
  })

  it('rejects malformed names with a 400', () => {
    for (const bad of ['', 'a/b/c/d', 'bad name', 'x:', '/x', 'x:tag with space']) {
      expect(() => parseModelName(bad)).toThrow(expect.objectContaining({ status: 400 }))
    }
  })
})
