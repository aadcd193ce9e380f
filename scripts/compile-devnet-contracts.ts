/**
 * `npm run compile:devnet`: compiles the contracts that the devnet chains and the tests deploy (USDC, Permit2 and
 * its `upto` proxy, the batch-settlement escrow with its deposit collector and Multicall3, the test smart wallet)
 * into contracts/out, or finds them there. `npm test` runs it among its static steps, so that no test compiles
 * them: solc-js compiles synchronously, and in a clean clone every vitest fork that started a chain compiled them
 * itself at the start of the run, each holding its event loop for seconds on a loaded machine and spending the
 * same CPU time (docs/testing.md, "Speed").
 */
import { performance } from 'node:perf_hooks'
import { batchEscrowArtifact, erc3009CollectorArtifact, multicall3Artifact } from '../devnet/chains/placeBatchSettlement.js'
import { permit2Artifact, uptoProxyArtifact } from '../devnet/chains/placePermit2.js'
import { usdcArtifact } from '../devnet/chains/startChain.js'
import { smartWalletFactoryArtifact } from '../tests/browser/support/smartWallets.js'

const t0 = performance.now()
const names = [usdcArtifact(), permit2Artifact(), uptoProxyArtifact(), batchEscrowArtifact(), erc3009CollectorArtifact(), multicall3Artifact(), smartWalletFactoryArtifact()].map((a) => a.contractName)
console.log(`compile:devnet: ${names.join(', ')} in ${Math.round(performance.now() - t0)} ms`)
