import { badRequest, type ModelServerError } from '../errors.js'
import { compileGoTemplate, TemplateError, TemplateTooLargeError, type CompiledTemplate } from './goTemplate.js'

/** How many times over a template may write a conversation (and its own text per turn) before it is refused. */
const RENDER_GROWTH = 4
/** The most of a render's bound its template's own text earns (a template is the model's, set by whoever created it). */
const MAX_TEMPLATE_TEXT_CHARS = 8 << 20

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

  /**
   * The prompt for a conversation (system messages included), ready to be tokenised as is. A template may write
   * the conversation and its own text per turn a few times over, not more: a render past `RENDER_GROWTH` × the
   * conversation + as much of the template per turn (at most `MAX_TEMPLATE_TEXT_CHARS`) + 1 MiB is a 400 (three
   * nested ranges over 400 one-character messages wrote 64 MB and held the server 19 s).
   */
  render(messages: PromptMessage[]): string {
    const conversation = messages.reduce((n, m) => n + m.content.length, 0)
    // the template's own text per turn counts too, up to a cap: a padded template would otherwise raise its own bound
    const ownText = Math.min(RENDER_GROWTH * this.source.length * (messages.length + 1), MAX_TEMPLATE_TEXT_CHARS)
    const maxChars = RENDER_GROWTH * conversation + ownText + (1 << 20)
    try {
      return this.#render(messages, maxChars)
    } catch (error) {
      if (error instanceof TemplateTooLargeError) throw badRequest(`the model's template renders this conversation to more than ${maxChars} characters`)
      throw error
    }
  }

  #render(messages: PromptMessage[], maxChars: number): string {
    const system = messages.filter((m) => m.role === 'system').map((m) => m.content).join('\n\n')
    if (this.compiled.fields.has('Messages')) {
      const lastUser = messages.findLast((m) => m.role === 'user')?.content ?? ''
      return this.compiled.render(values({ System: system, Prompt: lastUser, Messages: messages.map(message) }), maxChars)
    }
    let out = ''
    let turnSystem = ''
    let prompt: string | undefined
    for (const m of messages) {
      if (m.role === 'system') turnSystem = turnSystem ? `${turnSystem}\n\n${m.content}` : m.content
      else if (m.role === 'user' || m.role === 'tool') {
        if (prompt !== undefined) out += this.compiled.render(values({ System: turnSystem, Prompt: prompt }), maxChars)
        if (prompt !== undefined) turnSystem = ''
        prompt = m.content
      } else if (m.role === 'assistant') {
        out += this.compiled.render(values({ System: turnSystem, Prompt: prompt ?? '', Response: m.content }), maxChars)
        turnSystem = ''
        prompt = undefined
      }
    }
    const marker = '\u0000response\u0000'
    const last = this.compiled.render(values({ System: turnSystem, Prompt: prompt ?? '', Response: marker }), maxChars)
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
