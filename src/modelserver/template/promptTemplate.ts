import { badRequest, type ModelServerError } from '../errors.js'
import { compileGoTemplate, TemplateError, type CompiledTemplate } from './goTemplate.js'

export type PromptMessage = { role: string; content: string }

/**
 * An Ollama prompt template (Go text/template, the subset of `goTemplate.ts`) with Ollama's values:
 * `.System`, `.Prompt`, `.Response`, `.Messages` (`.Role`, `.Content`, `.Thinking`, `.ToolCalls`, `.ToolName`,
 * `.Images`), `.Tools`, `.Suffix`, `.Think`, `.ThinkLevel`, `.IsThinkSet`.
 *
 * As Ollama: a template that uses `.Messages` gets the whole conversation at once; an older one (`.System`,
 * `.Prompt`, `.Response` only) is rendered once per user turn with the assistant's answer in `.Response`, and
 * the last render is cut where `.Response` would go (the model writes it).
 */
export class PromptTemplate {
  private constructor(
    readonly source: string,
    private readonly compiled: CompiledTemplate,
  ) {}

  /** Parses and trial-renders `source`; a `TemplateError` says what this server cannot honour. */
  static compile(source: string): PromptTemplate {
    const template = new PromptTemplate(source, compileGoTemplate(source))
    template.render([
      { role: 'system', content: 's' },
      { role: 'user', content: 'u' },
      { role: 'assistant', content: 'a' },
      { role: 'user', content: 'u' },
    ])
    return template
  }

  /** The prompt for a conversation (system messages included), ready to be tokenised as is. */
  render(messages: PromptMessage[]): string {
    const system = messages.filter((m) => m.role === 'system').map((m) => m.content).join('\n\n')
    if (this.compiled.fields.has('Messages')) {
      const lastUser = messages.findLast((m) => m.role === 'user')?.content ?? ''
      return this.compiled.render(values({ System: system, Prompt: lastUser, Messages: messages.map(message) }))
    }
    let out = ''
    let turnSystem = ''
    let prompt: string | undefined
    for (const m of messages) {
      if (m.role === 'system') turnSystem = turnSystem ? `${turnSystem}\n\n${m.content}` : m.content
      else if (m.role === 'user' || m.role === 'tool') {
        if (prompt !== undefined) out += this.compiled.render(values({ System: turnSystem, Prompt: prompt }))
        if (prompt !== undefined) turnSystem = ''
        prompt = m.content
      } else if (m.role === 'assistant') {
        out += this.compiled.render(values({ System: turnSystem, Prompt: prompt ?? '', Response: m.content }))
        turnSystem = ''
        prompt = undefined
      }
    }
    const marker = '\u0000response\u0000'
    const last = this.compiled.render(values({ System: turnSystem, Prompt: prompt ?? '', Response: marker }))
    const cut = last.indexOf(marker)
    return out + (cut >= 0 ? last.slice(0, cut) : last)
  }
}

function values(v: Record<string, unknown>): Record<string, unknown> {
  return { System: '', Prompt: '', Response: '', Suffix: '', Messages: [], Tools: [], Think: false, ThinkLevel: '', IsThinkSet: false, ...v }
}

function message(m: PromptMessage): Record<string, unknown> {
  return { Role: m.role, Content: m.content, Thinking: '', ToolCalls: [], ToolName: '', Images: [] }
}

/** The compiled template of a model (cached by text), or a 400 saying why it cannot be honoured. */
export function promptTemplateOf(source: string): PromptTemplate {
  let template = cache.get(source)
  if (!template) {
    try {
      template = PromptTemplate.compile(source)
    } catch (error) {
      throw templateRefused(error)
    }
    cache.set(source, template)
    if (cache.size > 64) cache.delete(cache.keys().next().value!)
  }
  return template
}

const cache = new Map<string, PromptTemplate>()

function templateRefused(error: unknown): ModelServerError | unknown {
  if (!(error instanceof TemplateError)) return error
  return badRequest(`template cannot be used by this server: ${error.message} (supported: Go text/template with .System, .Prompt, .Response, .Messages, if/else/range/with, eq/ne/and/or/not/len/slice/index/json)`)
}
