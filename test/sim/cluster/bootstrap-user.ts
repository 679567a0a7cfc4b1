// The OAuth server's bootstrap authenticator: when `kubeadmin` can log in with a password. Modelled on
// openshift/library-go pkg/authentication/bootstrapauthenticator/bootstrap.go (read at 0045765, unchanged in its
// rules since release-4.12):
// - the user is there only while the Secret kube-system/kubeadmin exists and is not being deleted;
// - a Secret created more than an hour after the kube-system Namespace is ignored ("kubeadmin secret cannot be
//   recreated"): the user is disabled (IsEnabled false), whatever its hash — deleting it is final;
// - its `kubeadmin` key must be a bcrypt hash (bcrypt.Cost), or no login at all;
// - a password shorter than 23 characters (minPasswordLen, the installer's 5-5-5-5 format) is refused before its
//   hash is compared ("kubeadmin password must be at least 23 characters long").
// Comparing the password with the hash is bcrypt's; the caller passes that comparison in (the simulator has no
// bcrypt), so this model decides everything up to it.
import { R } from '../../../src/cluster/resources';
import type { SimStore } from '../store-types';

export const MIN_PASSWORD_LEN = 23;
const RECREATE_WINDOW_MS = 3600_000;
const BCRYPT = /^\$2[aby]?\$(\d\d)\$[./A-Za-z0-9]{53}$/;

export type BootstrapLogin =
  | { ok: true }
  | { ok: false; reason: 'no-secret' | 'recreated' | 'not-bcrypt' | 'too-short' | 'wrong-password'; message: string };

interface Meta {
  metadata?: { creationTimestamp?: unknown; deletionTimestamp?: unknown };
  data?: Record<string, string>;
}

/** Whether the bootstrap user exists at all (IsEnabled): the Secret is there, not being deleted, not re-created. */
export function bootstrapUserEnabled(store: SimStore): BootstrapLogin {
  const secret = store.get(R.secrets, 'kubeadmin', 'kube-system') as Meta | undefined;
  if (!secret || secret.metadata?.deletionTimestamp) return { ok: false, reason: 'no-secret', message: 'kubeadmin secret does not exist' };
  const namespace = store.get(R.namespaces, 'kube-system') as Meta | undefined;
  const created = Date.parse(String(secret.metadata?.creationTimestamp));
  const kubeSystem = Date.parse(String(namespace?.metadata?.creationTimestamp));
  if (created > kubeSystem + RECREATE_WINDOW_MS) return { ok: false, reason: 'recreated', message: 'kubeadmin secret cannot be recreated' };
  return { ok: true };
}

/** A login as kubeadmin with `password`; `matches` is bcrypt's CompareHashAndPassword. */
export function kubeadminLogin(store: SimStore, password: string, matches: (hash: string, password: string) => boolean): BootstrapLogin {
  const enabled = bootstrapUserEnabled(store);
  if (!enabled.ok) return enabled;
  const secret = store.get(R.secrets, 'kubeadmin', 'kube-system') as Meta;
  const hash = Buffer.from(secret.data?.kubeadmin ?? '', 'base64').toString('utf8');
  if (!BCRYPT.test(hash)) return { ok: false, reason: 'not-bcrypt', message: 'the kubeadmin key is not a bcrypt hash' };
  if (password.length < MIN_PASSWORD_LEN) return { ok: false, reason: 'too-short', message: `kubeadmin password must be at least ${MIN_PASSWORD_LEN} characters long` };
  return matches(hash, password) ? { ok: true } : { ok: false, reason: 'wrong-password', message: 'kubeadmin password mismatch' };
}
