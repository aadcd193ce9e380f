/**
 * Passes a generator through, calling `closed` when it is returned (or thrown into) before its first `next`: a
 * generator's `finally` runs only once its body started, and a consumer that leaves at once (the client gone
 * before the first write) must still close what the generator holds — the model-server stream, the call's
 * record. Nothing per chunk: `next` goes straight to the generator.
 */
export function whenNeverStarted<T>(source: AsyncGenerator<T>, closed: () => void): AsyncGenerator<T> {
  let started = false
  const close = () => {
    if (started) return
    started = true
    closed()
  }
  const wrapped: AsyncGenerator<T> = {
    next(...args) {
      started = true
      return source.next(...args)
    },
    return(value) {
      close()
      return source.return(value)
    },
    throw(error) {
      close()
      return source.throw(error)
    },
    [Symbol.asyncIterator]() {
      return wrapped
    },
  }
  return wrapped
}
