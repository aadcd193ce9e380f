import { availableParallelism } from 'node:os'

const MAX_DEFAULT_THREADS = 4

/**
 * The default llama.cpp thread count: one core left free (for the event loop and the processes that share the
 * machine under `npm start`), at least 1, at most 4. llama.cpp's threads wait for each other at every step, so
 * with one of them descheduled generation collapses: on 2 cores, 2 threads next to one busy process gave ~24
 * tokens/s against ~990 for 1 thread (README, "Threads"; scripts/bench/modelserverThreads.ts).
 */
export function defaultThreadCount(cores: number = availableParallelism()): number {
  return Math.max(1, Math.min(cores - 1, MAX_DEFAULT_THREADS))
}
