import { stat } from 'node:fs/promises'
import { GgufInsights, type GgufFileInfo, type Llama } from 'node-llama-cpp'

/**
 * Throws when a GGUF file cannot hold the model its header describes: no architecture, no tensors, or a file that
 * ends before its tensor data does (a cut-off download or upload). GGUF's reader fills what is past the end with
 * zeros, so only this check tells such a file from a model before llama.cpp fails to load it.
 *
 * The bound is a necessary condition that no whole file fails: the tensor data starts at the first tensor's file
 * offset minus its offset within the data, and `modelSize` (llama.cpp's own tensor sizes, read through
 * node-llama-cpp's insights) is at most the data's length; a file cut by more than the padding between two
 * tensors is refused. Models split over several files are not checked here.
 */
export async function assertTensorDataPresent(path: string, file: GgufFileInfo, llama: Llama): Promise<void> {
  if (!file.metadata?.general?.architecture) throw new Error('the GGUF header names no architecture (general.architecture)')
  const tensors = file.fullTensorInfo ?? []
  const first = tensors[0]
  if (!first) throw new Error('the GGUF file holds no tensors')
  if (tensors.some((t) => t.filePart !== first.filePart)) return
  const dataStart = BigInt(first.fileOffset) - BigInt(first.offset)
  const needed = dataStart + BigInt((await GgufInsights.from(file, llama)).modelSize)
  const { size } = await stat(path)
  if (BigInt(size) < needed) throw new Error(`the file ends at byte ${size}, before its tensor data does (at least ${needed} bytes): it is incomplete`)
}
