// The OpenShift releases the tests run the agent against (issue 37). The supported range is 4.14 to 4.22; the
// simulator also models 4.12 and 4.13 (out of Red Hat's support), which still carry paths of their own (ICSP only
// on 4.12, the first IDMS release 4.13). What differs per release is in test/sim/cluster/README.md "Per release" and,
// with its sources, docs/releases.md. The z-stream numbers are labels: the simulator decides by the minor only.

/** Every release the demo relocation runs on (version-matrix.test.ts), oldest first. */
export const SUPPORTED_RELEASES = ['4.14.12', '4.15.20', '4.16.8', '4.17.45', '4.18.30', '4.19.21', '4.20.12', '4.21.4', '4.22.1'] as const;

/** Modelled, not supported: kept while tests of their paths use them. */
export const UNSUPPORTED_MODELLED_RELEASES = ['4.12.30', '4.13.30'] as const;

/**
 * The releases the long paths run on (a site proxy, image-based media, the full site-config with its reboot): the
 * extended-support releases 4.16, 4.18, 4.20 and the newest, 4.22 — one every two minors, so each behaviour the
 * simulator changes by release is crossed on both sides.
 */
export const LONG_PATH_RELEASES = ['4.16.8', '4.18.30', '4.20.12', '4.22.1'] as const;
