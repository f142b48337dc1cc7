import { ensurePortalBuild } from '../build.ts';

/** The browser tests load the built portal: build it once per run when the sources changed. */
export default async function setup(): Promise<void> {
  await ensurePortalBuild();
}
