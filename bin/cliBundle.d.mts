/** Types of bin/cliBundle.mjs (plain JavaScript: `npx pay2store` runs it before any TypeScript tooling). */
/** The bundle's entry under `root` if a build is in place and none of its sources changed, else undefined. */
export function freshBundle(root: string): string | undefined
/** Builds the CLI bundle of the tree at `root`; returns its entry. Throws when esbuild is missing or the build fails. */
export function buildBundle(root: string): Promise<string>
