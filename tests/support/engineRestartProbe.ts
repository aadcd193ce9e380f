/**
 * Child-process probe for the "same seed across restarts" test: loads a model in a fresh process and prints
 * one generation as JSON. Usage: tsx engineRestartProbe.ts <model.gguf> <prompt> <options-json>
 */
import { createEngine } from '../../src/modelserver/engine/createEngine.js'

const [path, prompt, options] = process.argv.slice(2)
const engine = await createEngine({ threads: 1 })
const model = await engine.loadModel({ path: path!, name: 'probe' })
const r = await model.chat({ messages: [{ role: 'user', content: prompt! }], options: JSON.parse(options!) })
process.stdout.write(JSON.stringify({ content: r.content, evalCount: r.evalCount }) + '\n')
await engine.dispose()
