// The names that make up a site-config on media, apart from the code that reads them: detection copies media with
// only these (src/siteconfig/media.ts), so a waiting agent does not evaluate the site-config parser and schema
// until media appear (issue 39). The modules that own each name re-export it.
export const SITE_CONFIG_NAMES = ['site-config.yaml', 'site-config.yml', 'site-config.json'];
export const MULTI_DIR = 'site-configs';
/** The files of a manifest folder (`extra-manifests/`): .yaml, .yml and .json (sealed or not), read in name order. */
export const MANIFEST_FILE = /\.(ya?ml|json)(\.sealed)?$/i;
/** A file sealed to one node's key (src/siteconfig/sealed.ts). */
export const SEALED_SUFFIX = '.sealed';
export const SEED_RECONFIGURATION_FILE = 'cluster-configuration/manifest.json';
/** Deeper than any real site-config or nmstate state (nmstate's deepest is about 8). */
export const MAX_DEPTH = 64;
