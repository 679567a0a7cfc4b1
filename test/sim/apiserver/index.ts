// The simulated kube-apiserver (issue #3): import from here.
export { startApiServer, ApiServer, type ApiServerOptions, type RequestRecord, type NamedServingCertificate } from './server';
export { createStore, SimObjectStore, type StoreOptions, type UpdatePath, type WriteOptions } from './store';
export { ADMIN, BOOTSTRAPPER, BOOTSTRAPPER_USER, nodeIdentity, authorize, type AccessRule, type RequestAttributes } from './auth';
export { ResourceRegistry, openShiftMinor, apiVersionOf, type ServedResource } from './resources';
export { mergePatch, jsonPatch, strategicMergePatch } from './patch';
export { parseLabelSelector, parseFieldSelector } from './selectors';
export * as status from './status';
