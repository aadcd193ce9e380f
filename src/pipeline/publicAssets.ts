import { join } from 'node:path'
import express, { type RequestHandler } from 'express'
import swaggerUi from 'swagger-ui-express'
import { HANDBOOK_IMAGES } from '../pages/session/renderHandbook.js'
import { SWAGGER_ASSETS, swaggerUiOptions } from '../pages/swaggerPage.js'

const PREFIXES = [SWAGGER_ASSETS, '/doc/openapi', '/doc/asyncapi', HANDBOOK_IMAGES].map((p) => p.toLowerCase())

/**
 * The public static prefixes (`x-public-prefixes` of the document): swagger-ui's assets, the API
 * documents themselves and the handbook's images (`docs/images/`, shown by /book). Files only; anything not found falls through to the router (and its gate).
 *
 * Every request passes here, so a plain (case-insensitive, like Express's mount paths) prefix test comes
 * first: a request under none of the prefixes skips the nested router and its three path matches.
 */
export function publicAssets(root: string): RequestHandler {
  const router = express.Router()
  router.use(SWAGGER_ASSETS, swaggerUi.serveFiles(undefined, swaggerUiOptions as never))
  router.use('/doc/openapi', express.static(join(root, 'openapi'), { index: false, fallthrough: true }))
  router.use('/doc/asyncapi', express.static(join(root, 'asyncapi'), { index: false, fallthrough: true }))
  router.use(HANDBOOK_IMAGES, express.static(join(root, 'docs/images'), { index: false, fallthrough: true }))
  return (req, res, next) => {
    const path = req.path.toLowerCase()
    if (!PREFIXES.some((prefix) => path.startsWith(prefix))) return next()
    router(req, res, next)
  }
}
