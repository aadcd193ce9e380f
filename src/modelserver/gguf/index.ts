export { writeGguf, GgufType, type GgufDocument, type GgufTensor, type GgufValue } from './GgufWriter.js'
export { buildTinyLlama, type TinyLlamaOptions, type TinyModel } from './buildTinyLlama.js'
export {
  buildTinyChatModel,
  buildTinyEmbedModel,
  tinyChatModel,
  tinyEmbedModel,
  tinyChatOptions,
  tinyEmbedOptions,
  TINY_CHAT_MODEL_NAME,
  TINY_EMBED_MODEL_NAME,
  type TinyModelDescriptor,
} from './tinyModels.js'
export { formatParameterSize } from './formatParameterSize.js'
export { testModelNote } from './testModelNote.js'
