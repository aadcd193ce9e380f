/** The tracer (instrumentation scope) of this project's own spans: the server spans and the node:http client spans. */
export const TRACER_NAME = 'pay2store'
