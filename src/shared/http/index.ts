export { createAjv } from './createAjv.js'
export { compileOperations, type CompiledOperation, type CompiledOperations, type Unrouted } from './compileOperations.js'
export {
  createOpenApiRouter,
  type OpenApiRouter,
  type OpenApiRouterOptions,
  type OpenApiStages,
  type ResponseInfo,
  type ResponseValidationMode,
  type UnroutedResult,
  RouterSetupError,
  toValidationIssues,
} from './createOpenApiRouter.js'
export { codedErrorAnswer } from './codedErrorAnswer.js'
export { loadOpenApiDocument } from './loadOpenApiDocument.js'
export { middleware, onError, onResponse, type Stage, step } from './Stage.js'
export { matchOf, operationOf, type OperationStage, PipelineContext, type RequestExchange } from './RequestExchange.js'
export { findResponse, isJsonMediaType, ResponseValidator } from './ResponseValidator.js'
export {
  InvalidJsonError,
  MalformedUrlError,
  MethodNotAllowedError,
  NoOperationError,
  NotImplementedError,
  PayloadTooLargeError,
  renderRouterRefusal,
  RequestAbortedError,
  RequestNotValidError,
  routerRefusalRows,
  UnauthorizedError,
  UnsupportedMediaTypeError,
} from './routerRefusals.js'
export type { Responder } from './responseValidationStage.js'
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
