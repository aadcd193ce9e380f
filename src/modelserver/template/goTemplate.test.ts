import { describe, expect, it } from 'vitest'
import { compileGoTemplate, TemplateError, TemplateTooLargeError } from './goTemplate.js'
import { PromptTemplate } from './promptTemplate.js'

const render = (source: string, data: Record<string, unknown>) => compileGoTemplate(source).render(data)

describe('Go text/template subset', () => {
  it('fields, trimming, comments, if / else if / else', () => {
    expect(render('a {{- .X -}} b', { X: '1' })).toBe('a1b')
    expect(render('{{/* note */}}[{{ .X }}]', { X: 'v' })).toBe('[v]')
    const t = '{{ if eq .N 1 }}one{{ else if eq .N 2 3 }}two-or-three{{ else }}other{{ end }}'
    expect(render(t, { N: 1 })).toBe('one')
    expect(render(t, { N: 3 })).toBe('two-or-three')
    expect(render(t, { N: 9 })).toBe('other')
    expect(render('{{ if and .A (not .B) }}y{{ end }}{{ if or .B "" }}z{{ end }}', { A: 'x', B: '' })).toBe('y')
    expect(render('{{ with .S }}<{{ . }}>{{ else }}none{{ end }}', { S: '' })).toBe('none')
    expect(render('{{ .M | json }} {{ len .L }} {{ index .L 1 }}', { M: { a: 1 }, L: ['p', 'q'] })).toBe('{"a":1} 2 q')
  })

  it('range with variables, $ and the Llama 3 `$last` idiom', () => {
    const t =
      '{{- range $i, $m := .Messages }}{{- $last := eq (len (slice $.Messages $i)) 1 -}}' +
      '<{{ $m.Role }}>{{ .Content }}{{ if $last }}!{{ end }}|{{ $.Name }}{{ end }}{{ range .Empty }}x{{ else }}empty{{ end }}'
    const messages = [{ Role: 'user', Content: 'a' }, { Role: 'assistant', Content: 'b' }]
    expect(render(t, { Messages: messages, Name: 'n', Empty: [] })).toBe('<user>a|n<assistant>b!|nempty')
  })

  it('refuses what it cannot honour', () => {
    for (const t of ['{{ template "x" }}', '{{ printf "%s" .Prompt }}', '{{ if .X }}unclosed', '{{ end }}', '{{ define "x" }}{{ end }}']) {
      expect(() => compileGoTemplate(t).render({ X: 1, Prompt: '' }), t).toThrow(TemplateError)
    }
    expect(() => render('{{ .Missing }}', {})).toThrow(/can't evaluate field Missing/)
    expect(() => render('{{ $x }}', {})).toThrow(/undefined variable/)
  })
})

describe('Ollama prompt templates', () => {
  const messages = [
    { role: 'system', content: 'S' },
    { role: 'user', content: 'u1' },
    { role: 'assistant', content: 'a1' },
    { role: 'user', content: 'u2' },
  ]
  it('a .Messages template gets the whole conversation', () => {
    const t = PromptTemplate.compile('{{ range .Messages }}[{{ .Role }}:{{ .Content }}]{{ end }}>')
    expect(t.render(messages)).toBe('[system:S][user:u1][assistant:a1][user:u2]>')
  })
  it('an older .System/.Prompt/.Response template is rendered per turn and cut at .Response', () => {
    const t = PromptTemplate.compile('{{ if .System }}({{ .System }}){{ end }}Q:{{ .Prompt }} A:{{ .Response }};')
    expect(t.render(messages)).toBe('(S)Q:u1 A:a1;Q:u2 A:')
    expect(t.render([{ role: 'user', content: 'hi' }])).toBe('Q:hi A:')
  })
  it('compile trial-renders, so unknown fields are refused at once', () => {
    expect(() => PromptTemplate.compile('{{ .Nope }}')).toThrow(TemplateError)
    expect(() => PromptTemplate.compile('{{ range .Messages }}{{ .Nope }}{{ end }}')).toThrow(TemplateError)
  })
})

describe('a template cannot write without bound', () => {
  const nested = '{{range .Messages}}{{range $.Messages}}{{range $.Messages}}{{.Content}}{{end}}{{end}}{{end}}'
  const conversation = (n: number) => Array.from({ length: n }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: 'x' }))

  it('a render stops at its budget (TemplateTooLargeError), not after writing everything', () => {
    expect(() => compileGoTemplate('{{range .L}}{{range $.L}}ab{{end}}{{end}}').render({ L: Array.from({ length: 100 }) }, 1000)).toThrow(TemplateTooLargeError)
    expect(compileGoTemplate('{{range .L}}ab{{end}}').render({ L: Array.from({ length: 100 }) }, 1000)).toHaveLength(200)
  })

  it('three nested ranges over 400 one-character messages (64 MB, 19 s before) are a 400 at once; a usual template with them renders', () => {
    const t0 = performance.now()
    expect(() => PromptTemplate.compile(nested).render(conversation(400))).toThrow(expect.objectContaining({ status: 400, message: expect.stringMatching(/^the model's template renders this conversation to more than \d+ characters$/) }))
    // stopped at its budget, a small fraction of the 19 s (seen 2.0 s beside the whole suite on a slow 2-vCPU machine)
    expect(performance.now() - t0).toBeLessThan(5_000)
    const usual = PromptTemplate.compile('{{range .Messages}}<{{.Role}}>{{.Content}}</{{.Role}}>{{end}}')
    expect(usual.render(conversation(400))).toHaveLength(200 * ('<user>x</user>'.length + '<assistant>x</assistant>'.length))
  })
})
