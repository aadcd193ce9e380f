/**
 * A deterministic GGUF v3 writer (our own implementation of the format described in ggml's
 * docs/gguf.md): header, typed metadata key/values, tensor infos, then 32-byte aligned f32 tensor data.
 * The same input always yields the same bytes.
 */

export const GGUF_MAGIC = 0x46554747 // "GGUF" little-endian
export const GGUF_VERSION = 3
export const GGUF_DEFAULT_ALIGNMENT = 32

/** GGUF metadata value types (gguf_type). */
export const GgufType = {
  UINT8: 0,
  INT8: 1,
  UINT16: 2,
  INT16: 3,
  UINT32: 4,
  INT32: 5,
  FLOAT32: 6,
  BOOL: 7,
  STRING: 8,
  ARRAY: 9,
  UINT64: 10,
  INT64: 11,
  FLOAT64: 12,
} as const

export type GgufScalarKind = 'u8' | 'i8' | 'u16' | 'i16' | 'u32' | 'i32' | 'f32' | 'bool' | 'string' | 'u64' | 'i64' | 'f64'

export type GgufValue =
  | { kind: Exclude<GgufScalarKind, 'bool' | 'string' | 'u64' | 'i64'>; value: number }
  | { kind: 'u64' | 'i64'; value: bigint | number }
  | { kind: 'bool'; value: boolean }
  | { kind: 'string'; value: string }
  | { kind: 'array'; of: Exclude<GgufScalarKind, 'u64' | 'i64'>; value: ReadonlyArray<number | boolean | string> }

/** ggml tensor types we write. */
export const GgmlType = { F32: 0 } as const

export type GgufTensor = {
  name: string
  /** ggml order: dims[0] is the fastest-varying (row length). */
  dims: number[]
  data: Float32Array
}

const KIND_TO_TYPE: Record<GgufScalarKind, number> = {
  u8: GgufType.UINT8,
  i8: GgufType.INT8,
  u16: GgufType.UINT16,
  i16: GgufType.INT16,
  u32: GgufType.UINT32,
  i32: GgufType.INT32,
  f32: GgufType.FLOAT32,
  bool: GgufType.BOOL,
  string: GgufType.STRING,
  u64: GgufType.UINT64,
  i64: GgufType.INT64,
  f64: GgufType.FLOAT64,
}

/** Growable little-endian byte buffer. */
class ByteSink {
  private buf = new Uint8Array(1 << 16)
  private view = new DataView(this.buf.buffer)
  length = 0

  private ensure(extra: number): void {
    if (this.length + extra <= this.buf.length) return
    let size = this.buf.length
    while (size < this.length + extra) size *= 2
    const next = new Uint8Array(size)
    next.set(this.buf.subarray(0, this.length))
    this.buf = next
    this.view = new DataView(next.buffer)
  }

  u8(v: number): void {
    this.ensure(1)
    this.view.setUint8(this.length, v)
    this.length += 1
  }
  i8(v: number): void {
    this.ensure(1)
    this.view.setInt8(this.length, v)
    this.length += 1
  }
  u16(v: number): void {
    this.ensure(2)
    this.view.setUint16(this.length, v, true)
    this.length += 2
  }
  i16(v: number): void {
    this.ensure(2)
    this.view.setInt16(this.length, v, true)
    this.length += 2
  }
  u32(v: number): void {
    this.ensure(4)
    this.view.setUint32(this.length, v, true)
    this.length += 4
  }
  i32(v: number): void {
    this.ensure(4)
    this.view.setInt32(this.length, v, true)
    this.length += 4
  }
  f32(v: number): void {
    this.ensure(4)
    this.view.setFloat32(this.length, v, true)
    this.length += 4
  }
  f64(v: number): void {
    this.ensure(8)
    this.view.setFloat64(this.length, v, true)
    this.length += 8
  }
  u64(v: bigint | number): void {
    this.ensure(8)
    this.view.setBigUint64(this.length, BigInt(v), true)
    this.length += 8
  }
  i64(v: bigint | number): void {
    this.ensure(8)
    this.view.setBigInt64(this.length, BigInt(v), true)
    this.length += 8
  }
  bytes(b: Uint8Array): void {
    this.ensure(b.length)
    this.buf.set(b, this.length)
    this.length += b.length
  }
  string(s: string): void {
    const b = new TextEncoder().encode(s)
    this.u64(b.length)
    this.bytes(b)
  }
  padTo(alignment: number): void {
    const rem = this.length % alignment
    if (rem !== 0) {
      this.ensure(alignment - rem)
      this.length += alignment - rem // buffer is zero-initialised
    }
  }
  result(): Uint8Array {
    return this.buf.slice(0, this.length)
  }
}

function writeScalar(sink: ByteSink, kind: GgufScalarKind, value: number | bigint | boolean | string): void {
  switch (kind) {
    case 'u8':
      return sink.u8(value as number)
    case 'i8':
      return sink.i8(value as number)
    case 'u16':
      return sink.u16(value as number)
    case 'i16':
      return sink.i16(value as number)
    case 'u32':
      return sink.u32(value as number)
    case 'i32':
      return sink.i32(value as number)
    case 'f32':
      return sink.f32(value as number)
    case 'f64':
      return sink.f64(value as number)
    case 'u64':
      return sink.u64(value as number | bigint)
    case 'i64':
      return sink.i64(value as number | bigint)
    case 'bool':
      return sink.u8(value ? 1 : 0)
    case 'string':
      return sink.string(value as string)
  }
}

export type GgufDocument = {
  /** Written in this order (order is part of the determinism). */
  metadata: ReadonlyArray<readonly [string, GgufValue]>
  tensors: ReadonlyArray<GgufTensor>
  alignment?: number
}

export function writeGguf(doc: GgufDocument): Uint8Array {
  const alignment = doc.alignment ?? GGUF_DEFAULT_ALIGNMENT
  const keys = new Set<string>()
  for (const [key] of doc.metadata) {
    if (keys.has(key)) throw new Error(`duplicate GGUF metadata key ${key}`)
    keys.add(key)
  }
  const metadata: Array<readonly [string, GgufValue]> = [...doc.metadata]
  if (alignment !== GGUF_DEFAULT_ALIGNMENT && !keys.has('general.alignment')) {
    metadata.push(['general.alignment', { kind: 'u32', value: alignment }])
  }

  const sink = new ByteSink()
  sink.u32(GGUF_MAGIC)
  sink.u32(GGUF_VERSION)
  sink.u64(doc.tensors.length)
  sink.u64(metadata.length)

  for (const [key, v] of metadata) {
    sink.string(key)
    if (v.kind === 'array') {
      sink.u32(GgufType.ARRAY)
      sink.u32(KIND_TO_TYPE[v.of])
      sink.u64(v.value.length)
      for (const item of v.value) writeScalar(sink, v.of, item)
    } else {
      sink.u32(KIND_TO_TYPE[v.kind])
      writeScalar(sink, v.kind, v.value)
    }
  }

  let offset = 0
  const offsets: number[] = []
  for (const t of doc.tensors) {
    const elements = t.dims.reduce((a, b) => a * b, 1)
    if (elements !== t.data.length) {
      throw new Error(`tensor ${t.name}: dims ${t.dims.join('x')} need ${elements} values, got ${t.data.length}`)
    }
    offsets.push(offset)
    offset += t.data.byteLength
    offset = Math.ceil(offset / alignment) * alignment
  }

  doc.tensors.forEach((t, i) => {
    sink.string(t.name)
    sink.u32(t.dims.length)
    for (const d of t.dims) sink.u64(d)
    sink.u32(GgmlType.F32)
    sink.u64(offsets[i]!)
  })

  sink.padTo(alignment)
  const dataStart = sink.length
  doc.tensors.forEach((t, i) => {
    while (sink.length < dataStart + offsets[i]!) sink.u8(0)
    const le = new Uint8Array(t.data.byteLength)
    const view = new DataView(le.buffer)
    for (let j = 0; j < t.data.length; j++) view.setFloat32(j * 4, t.data[j]!, true)
    sink.bytes(le)
  })
  sink.padTo(alignment)
  return sink.result()
}
