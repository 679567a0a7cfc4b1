// Step "kubeadmin": the site's kubeadmin password (spec.kubeadminPassword), as image-based install offers it.
// OpenShift keeps the kubeadmin user's password only as a bcrypt hash in the Secret kube-system/kubeadmin, key
// `kubeadmin` (openshift/installer master, pkg/asset/manifests/openshift.go writes it as
// openshift/99_kubeadmin-password-secret.yaml from pkg/asset/password/password.go); the OAuth server's bootstrap
// authenticator reads it at every login and refuses kubeadmin once the Secret is gone (openshift/library-go
// master, pkg/authentication/bootstrapauthenticator), which is OpenShift's documented way to remove kubeadmin.
// A Secret deleted or re-created after the cluster's first hour is ignored by that authenticator
// (bootstrap.go getBootstrapUserSecret, "kubeadmin secret cannot be recreated"): the api step refuses such a
// site-config before anything in the cluster changes (src/siteconfig/cluster-check.ts kubeadminProblem), and the
// plan says so here. Nothing rolls out. The hash never reaches a log line, the plan, the report or status: changes say only what
// was done.
import { R } from '../cluster/resources';
import { b64, unb64, type Secret } from '../cluster/objects';
import type { ClusterClient, KubeObject } from '../cluster/types';
import type { Host } from '../host/host';
import { ConfigRejectedError, type Change, type Step, type StepContext } from '../engine/step';
import { kubeadminProblem, type KubeadminState } from '../siteconfig/cluster-check';
import { notInPlace } from './not-in-place';
import { resilient } from './resilient';
import { keepFactoryRecord, readFactoryRecord, type FactoryLoginAction } from './factory-record';
import { STATE_FILES } from '../paths';

const NAMESPACE = 'kube-system';
const NAME = 'kubeadmin';
const TARGET = `${NAMESPACE}/${NAME}`;

/**
 * The Secret's data as the factory left it (factory-record.ts), or none when there was no Secret: a site-config without
 * spec.kubeadminPassword puts the factory's password back, so an earlier site's no longer logs in. One an earlier site
 * removed stays removed: the authenticator ignores a Secret made again (above), and no kubeadmin is the safe side.
 */
interface FactoryPassword {
  data?: string;
}
const isFactoryPassword = (v: unknown): v is FactoryPassword => {
  const data = (v as FactoryPassword | null)?.data;
  return typeof v === 'object' && v !== null && !Array.isArray(v) && (data === undefined || (typeof data === 'string' && /^\$2[aby]\$\d\d\$/.test(Buffer.from(data, 'base64').toString('latin1'))));
};

const WHAT = "kubeadmin's password";
export const recordedPassword = (host: Host, stateDir: string) => readFactoryRecord(host, stateDir, STATE_FILES.kubeadminFactory, isFactoryPassword, WHAT);
const BACK = "kubeadmin's password back to the factory's: an earlier site's no longer logs in";

async function assess(ctx: StepContext): Promise<{ factory: FactoryPassword; change?: Change; restore?: string } | undefined> {
  const wanted = ctx.site.resolved.kubeadminPassword;
  const recorded = await recordedPassword(ctx.host, ctx.stateDir);
  if (!wanted && recorded?.data === undefined) return undefined;
  const secret = await (await ctx.cluster()).get<Secret>(R.secrets, NAME, NAMESPACE);
  const data = secret?.data?.[NAME];
  const factory = recorded ?? (data === undefined ? {} : { data });
  if (!wanted) {
    // Unsigned media take logins away and add none: an earlier site's password stays until signed media (or prepare)
    // put the factory's back (the sixteenth hostile re-test of issue 36).
    if (!secret || data === factory.data || ctx.site.resolved.issued === undefined) return { factory };
    return { factory, restore: factory.data, change: { kind: 'Secret', target: TARGET, action: 'update', detail: BACK } };
  }
  if ('remove' in wanted) return { factory, ...(secret ? { change: { kind: 'Secret', target: TARGET, action: 'delete', detail: 'kubeadmin can no longer log in' } } : {}) };
  if (unb64(data) === wanted.hash) return { factory };
  return { factory, change: { kind: 'Secret', target: TARGET, action: secret ? 'update' : 'create', detail: 'a new kubeadmin password (its bcrypt hash from the site-config)' } };
}

const pending = async (ctx: StepContext): Promise<Change | undefined> => (await assess(ctx))?.change;

/** When kube-system and kube-system/kubeadmin were created, read only when the site-config sets a kubeadmin hash. */
export async function readKubeadminState(ctx: StepContext): Promise<KubeadminState | undefined> {
  const wanted = ctx.site.resolved.kubeadminPassword;
  if (!wanted || !('hash' in wanted)) return undefined;
  const client = await ctx.cluster();
  const kubeSystem = await client.get<KubeObject>(R.namespaces, 'kube-system');
  const created = kubeSystem?.metadata?.creationTimestamp;
  if (!created) return undefined;
  const secret = await client.get<KubeObject>(R.secrets, 'kubeadmin', 'kube-system');
  const secretCreated = secret && !secret.metadata?.deletionTimestamp ? secret.metadata?.creationTimestamp : undefined;
  return { kubeSystemCreated: String(created), ...(secretCreated ? { secretCreated: String(secretCreated) } : {}), now: ctx.clock.now() };
}

/** For `prepare`, re-arming the node: kubeadmin's password back to the factory's, or the one there now recorded as it. */
export async function factoryPasswordAtPrepare(host: Host, stateDir: string, client: ClusterClient): Promise<FactoryLoginAction | undefined> {
  const recorded = await recordedPassword(host, stateDir);
  const data = (await client.get<Secret>(R.secrets, NAME, NAMESPACE))?.data?.[NAME];
  if (!recorded) return { description: `record ${WHAT} as the factory's`, apply: () => keepFactoryRecord(host, stateDir, STATE_FILES.kubeadminFactory, data === undefined ? {} : { data }) };
  if (data === undefined || recorded.data === undefined || data === recorded.data) return undefined;
  return { description: BACK, apply: async () => void (await client.patch(R.secrets, NAME, { data: { [NAME]: recorded.data } }, 'merge', NAMESPACE)) };
}

export const kubeadminStep: Step = resilient({
  name: 'kubeadmin',
  title: 'Set the kubeadmin password',

  async plan(ctx) {
    const state = await readKubeadminState(ctx);
    const problem = state && kubeadminProblem(state);
    if (problem) throw new ConfigRejectedError(`spec.kubeadminPassword.hash ${problem}`, 'Provide a site-config without a kubeadmin password hash.');
    const change = await pending(ctx);
    return change ? [change] : [];
  },

  async check(ctx) {
    return (await pending(ctx)) === undefined;
  },

  async apply(ctx) {
    const a = await assess(ctx);
    const change = a?.change;
    if (!change) return;
    const wanted = ctx.site.resolved.kubeadminPassword;
    const client = await ctx.cluster();
    await keepFactoryRecord(ctx.host, ctx.stateDir, STATE_FILES.kubeadminFactory, a.factory);
    if (!wanted) await client.patch(R.secrets, NAME, { data: { [NAME]: a.restore } }, 'merge', NAMESPACE);
    else if ('remove' in wanted) await client.delete(R.secrets, NAME, NAMESPACE);
    else if (change.action === 'create') await client.create<Secret>(R.secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: NAME, namespace: NAMESPACE }, type: 'Opaque', data: { [NAME]: b64(wanted.hash) } });
    else await client.patch(R.secrets, NAME, { data: { [NAME]: b64(wanted.hash) } }, 'merge', NAMESPACE);
    ctx.changed(change);
    ctx.log.info(`${change.detail} (${change.action} Secret ${TARGET})`);
  },

  async verify(ctx) {
    if (await pending(ctx)) throw notInPlace(`the Secret ${TARGET} is not as the site-config asks`, 'that Secret');
  },
});
