import { describe, expect, it } from 'vitest'
import { capGeneration } from './capGeneration.js'

describe('capping a paid call at the tokens its payment covers', () => {
  it('sets num_predict, keeping a smaller one and replacing "no limit"', () => {
    expect(capGeneration({ prompt: 'x' }, 'num_predict', 16)).toEqual({ prompt: 'x', options: { num_predict: 16 } })
    expect(capGeneration({ options: { num_predict: 4, seed: 1 } }, 'num_predict', 16)).toEqual({ options: { num_predict: 4, seed: 1 } })
    expect(capGeneration({ options: { num_predict: 400 } }, 'num_predict', 16)).toEqual({ options: { num_predict: 16 } })
    expect(capGeneration({ options: { num_predict: -1 } }, 'num_predict', 16)).toEqual({ options: { num_predict: 16 } })
  })
  it('sets max_tokens and clamps max_completion_tokens', () => {
    expect(capGeneration({ messages: [] }, 'max_tokens', 8)).toEqual({ messages: [], max_tokens: 8 })
    expect(capGeneration({ max_tokens: null, max_completion_tokens: 100 }, 'max_tokens', 8)).toEqual({ max_tokens: 8, max_completion_tokens: 8 })
    expect(capGeneration({ max_tokens: 3 }, 'max_tokens', 8)).toEqual({ max_tokens: 3 })
  })
  it('sets the Responses API max_output_tokens, not a field that API does not have', () => {
    expect(capGeneration({ input: 'x' }, 'max_output_tokens', 8)).toEqual({ input: 'x', max_output_tokens: 8 })
    expect(capGeneration({ input: 'x', max_output_tokens: 5 }, 'max_output_tokens', 8)).toEqual({ input: 'x', max_output_tokens: 5 })
  })
  it('leaves a non-object body alone', () => {
    expect(capGeneration(undefined, 'max_tokens', 8)).toBeUndefined()
  })
})
