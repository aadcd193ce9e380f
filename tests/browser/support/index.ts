/**
 * Browser test harness: the whole system in a real Chromium with an injected wallet.
 *
 *   const system = await startSystem()            // npm start on free ports: devnet + model server + gateway
 *   const browser = await launchBrowser()         // Debian's headless shell or /usr/bin/chromium (CHROMIUM_PATH overrides)
 *   const { page, walletLog } = await openPage(browser, { wallets: [walletFromKey(key)] })
 *   await login(page, `${system.url}/journal`)    // gate → /login?from=%2Fjournal → sign → back on /journal
 *   await checkPage(page, 'journal')              // no console error / failed request, axe clean, screenshot
 *   await browser.close(); await system.close()
 *
 * - startSystem({ env?, contracts? }) → { url, modelServerUrl, dataDir, devnet, output(), close() }: runs
 *   scripts/start.ts as a child process (so exactly what `npm start` runs), free ports, fresh data dir,
 *   SERVICE_PUBLIC_ORIGIN = url. Without parameters, in the browser project, it is the one system that
 *   sharedSystem.ts (globalSetup) started for every file; its close() leaves it running. `devnet` is devnet.json: chain RPC URLs, funded payer keys
 *   (`accounts.evm` role 'payer'), the overlord TEST key (`shadow.overlord.privateKey`) for /cabinet.
 *   The flow-A unlock proof is written as `npm start` does. Contracts are skipped unless `contracts: true`.
 * - launchBrowser() → playwright-core Browser.
 * - openPage(browser, { wallets?, chainId?, viewport? }) → { page, walletLog, problems() }: own context
 *   (cookies, localStorage), problems recorded from the start.
 * - walletFromKey(privateKey, info?) → TestWallet; any { address, signMessage(rawHex), signTypedData(def), info? }
 *   works (smart-contract wallets return EIP-1271 / EIP-6492 signatures for their contract address).
 *   injectWallets (called by openPage): first wallet is window.ethereum, all announced through EIP-6963;
 *   eth_requestAccounts, eth_accounts, eth_chainId, net_version, personal_sign, eth_signTypedData_v4,
 *   wallet_switchEthereumChain. walletLog lists every request ({method, provider}).
 * - login(page, from, { origin?, wallet? }): `from` absolute, or relative to the page's current origin;
 *   `wallet` picks an EIP-6963 wallet by its name on the login page.
 * - checkPage(page, name, { allow? }): asserts zero console errors, uncaught exceptions, failed requests and
 *   ≥400 responses since the last check (allow(problem) accepts ones the test provoked on purpose), no
 *   serious/critical axe-core violation, and writes .tmp/screenshots/<name>.png.
 *
 * Browser test files live in tests/browser/ and run in vitest's "browser" project (with tests/system/, the other
 * files against the shared system), one file at a time and after the other tests (vitest.config.ts), so two
 * Chromiums never share the two cores.
 * Alone: `npm run test:browser`.
 */
export { checkPage, launchBrowser, login, openPage, SCREENSHOTS, waitForVisible, type Problem } from './browser.js'
export { freePort, startSystem, type System } from './startSystem.js'
export { injectWallets, walletFromKey, type TestWallet, type WalletLog } from './wallet.js'
export { deploySmartWalletFactory, type SmartWalletFactory } from './smartWallets.js'
