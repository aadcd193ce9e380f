// Node's built-in AggregateError: same constructor signature as the polyfill, `new AggregateError(errors, message)`.
module.exports = AggregateError
