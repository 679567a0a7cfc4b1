// What the domain step knew before it changed the Ingress config, kept in the state directory for settle's
// route replacement: routes on an apps domain set by an earlier relocation must move too, and after the
// change the cluster no longer says what that domain was.
import * as path from 'node:path';
import type { StepContext } from '../../engine/step';

export const DOMAIN_STATE_FILE = 'domain.json';

export interface DomainState {
  digest: string;
  /** Ingress spec.appsDomain before this config's first change (undefined: none was set). */
  previousAppsDomain?: string;
  /** IngressController default spec.defaultCertificate before the change, for the report and a manual undo. */
  previousDefaultCertificate?: string;
}

function filePath(ctx: StepContext): string {
  return path.posix.join(ctx.stateDir, DOMAIN_STATE_FILE);
}

export async function readDomainState(ctx: StepContext): Promise<DomainState | undefined> {
  const text = await ctx.host.readTextIfExists(filePath(ctx));
  if (!text) return undefined;
  try {
    const state = JSON.parse(text) as DomainState;
    return state.digest === ctx.site.digest ? state : undefined;
  } catch {
    return undefined;
  }
}

/** Written once per config, before the first change: a re-run after a power cut must not overwrite it with post-change values. */
export async function saveDomainStateOnce(ctx: StepContext, state: Omit<DomainState, 'digest'>): Promise<DomainState> {
  const existing = await readDomainState(ctx);
  if (existing) return existing;
  const full: DomainState = { digest: ctx.site.digest, ...state };
  await ctx.host.writeFileAtomic(filePath(ctx), `${JSON.stringify(full, null, 2)}\n`, 0o644);
  return full;
}
