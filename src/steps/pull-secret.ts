// Step "pull-secret": openshift-config/pull-secret (type kubernetes.io/dockerconfigjson, single key
// .dockerconfigjson; openshift-docs images-update-global-pull-secret.adoc). `merge` (default) adds the
// site's registries and overrides the ones it names; `replace` makes the site's auths the whole secret.
// The previous value is backed up (state directory, 0600) before the first change. Its contents never reach a
// log, a change record or an error: only registry names do.
//
// The MCO renders the pull secret into the node's /var/lib/kubelet/config.json: a new rendered config for
// pool master, without a drain (openshift-docs: pull-secret changes need no drain since 4.7.4). settle waits for it.
import * as path from 'node:path';
import { R } from '../cluster/resources';
import type { ClusterClient } from '../cluster/types';
import { StepError, type Change, type Step, type StepContext } from '../engine/step';
import type { PullSecret, PullSecretEntry } from '../siteconfig/types';
import { STATE_FILES } from '../paths';
import { b64, createOrUpdate, sameJson, unb64, updateObject, type Secret } from '../cluster/objects';
import { resilient } from './resilient';
import { MASTER_POOL, recordRollouts } from './rollouts';
import { notInPlace } from './not-in-place';

export const PULL_SECRET = { namespace: 'openshift-config', name: 'pull-secret' } as const;
const KEY = '.dockerconfigjson';
export const PULL_SECRET_BACKUP = `${STATE_FILES.backups}/pull-secret.json`;

interface DockerConfig {
  auths?: Record<string, PullSecretEntry>;
  [field: string]: unknown;
}

/**
 * CRI-O reads auths through containers/image, which uses only `auth` (base64 of user:password;
 * containers-auth.json(5)); the site-config may give username and password instead.
 */
export function normalizeEntry(entry: PullSecretEntry): PullSecretEntry {
  if (entry.auth || entry.username === undefined || entry.password === undefined) return entry;
  const { username, password, ...rest } = entry;
  return { ...rest, auth: Buffer.from(`${username}:${password}`, 'utf8').toString('base64') };
}

/** The desired .dockerconfigjson for `mode`, from the current one (undefined when there is none). */
export function desiredDockerConfig(current: DockerConfig | undefined, site: PullSecret, mode: 'merge' | 'replace'): DockerConfig {
  const siteAuths = Object.fromEntries(Object.entries(site.auths).map(([registry, entry]) => [registry, normalizeEntry(entry)]));
  if (mode === 'replace' || !current) return { auths: siteAuths };
  return { ...current, auths: { ...(current.auths ?? {}), ...siteAuths } };
}

/** Registry names added, changed and removed (names only: never credentials). */
export function describeAuthChanges(before: DockerConfig | undefined, after: DockerConfig): { added: string[]; updated: string[]; removed: string[] } {
  const b = before?.auths ?? {};
  const a = after.auths ?? {};
  return {
    added: Object.keys(a).filter((k) => !(k in b)).sort(),
    updated: Object.keys(a).filter((k) => k in b && !sameJson(a[k], b[k])).sort(),
    removed: Object.keys(b).filter((k) => !(k in a)).sort(),
  };
}

function parseDockerConfig(secret: Secret | undefined): DockerConfig | undefined {
  const text = unb64(secret?.data?.[KEY]);
  if (text === undefined) return undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as DockerConfig;
  } catch {
    // reported below without the content
  }
  throw new StepError(`${PULL_SECRET.namespace}/${PULL_SECRET.name} key ${KEY} is not a JSON object`, 'Set spec.pullSecretMode: replace in the site-config to overwrite it, or repair the secret.', false);
}

interface Assessment {
  secret?: Secret;
  current?: DockerConfig;
  desired?: DockerConfig;
  changes: Change[];
}

async function assess(ctx: StepContext, client: ClusterClient): Promise<Assessment> {
  const site = ctx.site.resolved.pullSecret;
  if (!site) return { changes: [] };
  const mode = ctx.site.resolved.pullSecretMode;
  const secret = await client.get<Secret>(R.secrets, PULL_SECRET.name, PULL_SECRET.namespace);
  const current = mode === 'replace' ? tryParse(secret) : parseDockerConfig(secret);
  const desired = desiredDockerConfig(current, site, mode);
  if (secret && current && sameJson(current, desired)) return { secret, current, desired, changes: [] };
  const d = describeAuthChanges(current, desired);
  const detail = [`${mode}`, d.added.length ? `adds ${d.added.join(', ')}` : '', d.updated.length ? `updates ${d.updated.join(', ')}` : '', d.removed.length ? `removes ${d.removed.join(', ')}` : ''].filter(Boolean).join('; ');
  return { ...(secret ? { secret } : {}), ...(current ? { current } : {}), desired, changes: [{ kind: 'Secret', target: `${PULL_SECRET.namespace}/${PULL_SECRET.name}`, action: secret ? 'update' : 'create', detail }] };
}

/** In replace mode a broken current value does not matter (it is overwritten and still backed up). */
function tryParse(secret: Secret | undefined): DockerConfig | undefined {
  try {
    return parseDockerConfig(secret);
  } catch {
    return undefined;
  }
}

/** Saves the secret as it was before the agent's first change (kept across runs: the oldest is the original). */
async function backUp(ctx: StepContext, secret: Secret | undefined): Promise<void> {
  const target = path.posix.join(ctx.stateDir, PULL_SECRET_BACKUP);
  if (!(await ctx.host.exists(target))) {
    const content = { savedAt: new Date(ctx.clock.now()).toISOString(), existed: secret !== undefined, type: secret?.type, data: secret?.data ?? {} };
    await ctx.host.writeFileAtomic(target, `${JSON.stringify(content, null, 2)}\n`, 0o600);
  }
  ctx.data.backup = target;
  await ctx.save();
}

export const pullSecretStep: Step = resilient({
  name: 'pull-secret',
  title: 'Update the pull secret',

  async plan(ctx) {
    return (await assess(ctx, await ctx.cluster())).changes;
  },

  async check(ctx) {
    const a = await assess(ctx, await ctx.cluster());
    if (a.changes.length === 0) ctx.log.info(ctx.site.resolved.pullSecret ? 'pull secret already as configured; nothing to write' : 'no pull secret in the site-config');
    return a.changes.length === 0;
  },

  async apply(ctx) {
    const client = await ctx.cluster();
    const a = await assess(ctx, client);
    if (a.changes.length === 0 || !a.desired) return;
    await backUp(ctx, a.secret);
    await recordRollouts(ctx, client, 'pull-secret', [{ kind: 'machineconfigpool', name: MASTER_POOL, reason: 'pull secret' }]);
    const site = ctx.site.resolved.pullSecret as PullSecret;
    const mode = ctx.site.resolved.pullSecretMode;
    // Re-read on every 409 and merge into what is there then: someone may have added a registry meanwhile.
    const merge = (current: Secret): Secret | undefined => {
      const now = mode === 'replace' ? tryParse(current) : parseDockerConfig(current);
      const desired = desiredDockerConfig(now, site, mode);
      if (now && sameJson(now, desired)) return undefined;
      return { ...current, data: { ...current.data, [KEY]: b64(JSON.stringify(desired)) } };
    };
    if (!a.secret) {
      // A 409 on the create (AlreadyExists: created meanwhile, or Conflict) re-reads and merges instead of failing.
      await createOrUpdate<Secret>(client, R.secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { ...PULL_SECRET }, type: 'kubernetes.io/dockerconfigjson', data: { [KEY]: b64(JSON.stringify(a.desired)) } }, merge);
    } else {
      await updateObject<Secret>(client, R.secrets, PULL_SECRET.name, PULL_SECRET.namespace, merge);
    }
    for (const c of a.changes) ctx.changed(c);
  },

  async verify(ctx) {
    const a = await assess(ctx, await ctx.cluster());
    if (a.changes.length > 0) {
      throw notInPlace(`${PULL_SECRET.namespace}/${PULL_SECRET.name} does not hold the site's registries after the update (${a.changes[0]?.detail})`, 'the secret');
    }
  },
});
