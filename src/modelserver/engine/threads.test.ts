import { describe, expect, it } from 'vitest'
import { defaultThreadCount } from './threads.js'

describe('default llama.cpp threads', () => {
  it('leaves one core free, at least 1, at most 4', () => {
    expect([1, 2, 3, 4, 5, 8, 64].map((cores) => defaultThreadCount(cores))).toEqual([1, 1, 2, 3, 4, 4, 4])
  })
})
