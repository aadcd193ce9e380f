import { Ajv2020, type Options } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'

// ajv-formats is CommonJS; under NodeNext its default import is the module object on some toolchains.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv2020,
) => Ajv2020

/**
 * Ajv for OpenAPI 3.1 documents: JSON Schema 2020-12 (`type: [x, 'null']`, `const`, `prefixItems`…) with the
 * standard formats. Not strict, because OpenAPI adds keywords of its own (`example`, `xml`, `x-*`…).
 */
export function createAjv(options: Options = {}): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: true, ...options })
  addFormats(ajv)
  ajv.addKeyword({ keyword: 'discriminator' })
  return ajv
}
