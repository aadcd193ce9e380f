export { createAjv } from './createAjv.js'
export {
  createOpenApiRouter,
  type OpenApiRouter,
  type OpenApiRouterOptions,
  type ResponseInfo,
  type ResponseValidationMode,
  type UnroutedResult,
  RouterSetupError,
  toValidationIssues,
} from './createOpenApiRouter.js'
export { loadOpenApiDocument } from './loadOpenApiDocument.js'
export { findResponse, isJsonMediaType, ResponseValidator } from './ResponseValidator.js'
export type {
  HttpHeaders,
  HttpResult,
  OperationHandler,
  OperationInfo,
  RequestContext,
  RequestValidationIssue,
  ResponseValidationReport,
  SecurityRequirements,
  UnroutedRequest,
} from './types.js'
