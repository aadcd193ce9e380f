import { join } from 'node:path'
import express, { type Router } from 'express'
import swaggerUi from 'swagger-ui-express'
import { SWAGGER_ASSETS, swaggerUiOptions } from '../pages/swaggerPage.js'

/**
 * The public static prefixes (`x-public-prefixes` of the document): swagger-ui's assets and the API
 * documents themselves. Files only; anything not found falls through to the router (and its gate).
 */
export function publicAssets(root: string): Router {
  const router = express.Router()
  router.use(SWAGGER_ASSETS, swaggerUi.serveFiles(undefined, swaggerUiOptions as never))
  router.use('/doc/openapi', express.static(join(root, 'openapi'), { index: false, fallthrough: true }))
  router.use('/doc/asyncapi', express.static(join(root, 'asyncapi'), { index: false, fallthrough: true }))
  return router
}
